package manager

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/bindingjson"
	"github.com/atoll-dev/atoll/pkg/util/wire"
)

// newInformerFunc returns the manager cache's informer constructor:
// ResourceBindings and ClusterResourceBindings (one per template, and
// nearly all of a restart's decoding) list and watch through pkg/util/wire,
// every other kind through controller-runtime's ListerWatcher.
//
// The wire ListerWatchers list every namespace with no selector, as the
// cache's ByObject entries for bindings ask; one that restricts bindings
// must restrict them here too.
//
// Metadata-only entries (PartialObjectMetadata: the templates hpa-marker
// and the replicas syncer watch) are the shared template informers
// (templatemeta.Informers.ForCache), which the detector holds anyway: one
// list and one copy per resource instead of two. Kinds in restricted (a
// ByObject entry limits their namespaces or selects) keep informers of the
// cache's own. mapper is read when an informer is made, after the manager
// has been created.
func newInformerFunc(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme,
	templates *templatemeta.Informers, mapper *meta.RESTMapper, restricted map[schema.GroupKind]bool) (func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer, error) {
	client, err := wire.NewTypedClient(cfg, httpClient, workv1alpha2.SchemeGroupVersion, scheme, bindingjson.Decode)
	if err != nil {
		return nil, err
	}
	params := runtime.NewParameterCodec(scheme)
	bindings := wire.NewListWatch(client, "resourcebindings", func() runtime.Object { return &workv1alpha2.ResourceBindingList{} }, params)
	clusterBindings := wire.NewListWatch(client, "clusterresourcebindings", func() runtime.Object { return &workv1alpha2.ClusterResourceBindingList{} }, params)
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		switch obj.(type) {
		case *workv1alpha2.ResourceBinding:
			lw = bindings
		case *workv1alpha2.ClusterResourceBinding:
			lw = clusterBindings
		case *metav1.PartialObjectMetadata:
			gvk := obj.GetObjectKind().GroupVersionKind()
			if templates == nil || restricted[gvk.GroupKind()] || *mapper == nil {
				break
			}
			if mapping, err := (*mapper).RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
				return templates.ForCache(mapping.Resource)
			}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}, nil
}
