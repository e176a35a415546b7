// Package baseline is the ClusterBaseline admission plugin of atoll's
// embedded kube-apiserver: it refuses a baseline whose dependsOn lists name
// unknown components or form a cycle (the error names the cycle path), or
// whose readiness expressions do not compile. These checks need a graph
// walk that CEL validation rules cannot express. Against an external API
// server (atoll controller-manager) the plugin is absent and the baseline
// controller reports the same errors in the Ready condition and delivers
// nothing.
package baseline

import (
	"context"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// PluginName is the admission plugin's name.
const PluginName = "AtollClusterBaseline"

// Register adds the plugin to plugins; the kube-apiserver enables it when
// its name is also in the recommended plugin order.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return &plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}

type plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = (*plugin)(nil)

var resource = appsv1alpha1.Resource("clusterbaselines")

// Validate refuses an invalid ClusterBaseline spec. An update that leaves
// the spec as it was passes, so that the finalizer of a baseline stored
// before this check can still be removed.
func (p *plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != resource || a.GetSubresource() != "" {
		return nil
	}
	cb, err := decode(a.GetObject())
	if err != nil || cb == nil {
		return err
	}
	if a.GetOperation() == admission.Update {
		if old, err := decode(a.GetOldObject()); err == nil && old != nil && semantic.Equal(old.Spec, cb.Spec) {
			return nil
		}
	}
	if errs := baseline.Validate(&cb.Spec); len(errs) > 0 {
		return apierrors.NewInvalid(appsv1alpha1.GroupVersion.WithKind("ClusterBaseline").GroupKind(), a.GetName(), errs)
	}
	return nil
}

func decode(obj runtime.Object) (*appsv1alpha1.ClusterBaseline, error) {
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case *appsv1alpha1.ClusterBaseline:
		return o, nil
	case *unstructured.Unstructured:
		cb := &appsv1alpha1.ClusterBaseline{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cb); err != nil {
			return nil, apierrors.NewBadRequest("decoding ClusterBaseline: " + err.Error())
		}
		return cb, nil
	}
	return nil, nil
}
