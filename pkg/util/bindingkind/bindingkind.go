// Package bindingkind adapts ResourceBinding and ClusterResourceBinding,
// which share spec and status types, so that one reconciler serves both.
package bindingkind

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Kind is one of the two binding kinds.
type Kind interface {
	// Kind is ResourceBinding or ClusterResourceBinding.
	Kind() string
	NewObject() client.Object
	NewList() client.ObjectList
	Spec(client.Object) *workv1alpha2.ResourceBindingSpec
	Status(client.Object) *workv1alpha2.ResourceBindingStatus
	// Requests lists the bindings of l that filter accepts (all for a nil
	// filter) as reconcile requests.
	Requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request
	// Specs returns the specs of the bindings of l (pointers into l).
	Specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec
}

// Both are the two kinds, namespaced first.
var Both = []Kind{ResourceBinding{}, ClusterResourceBinding{}}

// ResourceBinding adapts work.karmada.io ResourceBinding.
type ResourceBinding struct{}

func (ResourceBinding) Kind() string               { return workv1alpha2.ResourceKindResourceBinding }
func (ResourceBinding) NewObject() client.Object   { return &workv1alpha2.ResourceBinding{} }
func (ResourceBinding) NewList() client.ObjectList { return &workv1alpha2.ResourceBindingList{} }
func (ResourceBinding) Spec(o client.Object) *workv1alpha2.ResourceBindingSpec {
	return &o.(*workv1alpha2.ResourceBinding).Spec
}
func (ResourceBinding) Status(o client.Object) *workv1alpha2.ResourceBindingStatus {
	return &o.(*workv1alpha2.ResourceBinding).Status
}
func (ResourceBinding) Requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	return requests(l, filter)
}

func (ResourceBinding) Specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec {
	return specs(l)
}

// ClusterResourceBinding adapts work.karmada.io ClusterResourceBinding.
type ClusterResourceBinding struct{}

func (ClusterResourceBinding) Kind() string {
	return workv1alpha2.ResourceKindClusterResourceBinding
}
func (ClusterResourceBinding) NewObject() client.Object {
	return &workv1alpha2.ClusterResourceBinding{}
}
func (ClusterResourceBinding) NewList() client.ObjectList {
	return &workv1alpha2.ClusterResourceBindingList{}
}
func (ClusterResourceBinding) Spec(o client.Object) *workv1alpha2.ResourceBindingSpec {
	return &o.(*workv1alpha2.ClusterResourceBinding).Spec
}
func (ClusterResourceBinding) Status(o client.Object) *workv1alpha2.ResourceBindingStatus {
	return &o.(*workv1alpha2.ClusterResourceBinding).Status
}
func (ClusterResourceBinding) Requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	return requests(l, filter)
}

func (ClusterResourceBinding) Specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec {
	return specs(l)
}

// items returns the bindings of a list of either kind (pointers into l).
func items(l client.ObjectList) []client.Object {
	objs, err := meta.ExtractList(l)
	if err != nil {
		panic(fmt.Sprintf("bindingkind: %T is not a binding list: %v", l, err))
	}
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o.(client.Object)
	}
	return out
}

func requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	var out []reconcile.Request
	for _, b := range items(l) {
		if filter == nil || filter(Spec(b)) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.GetNamespace(), Name: b.GetName()}})
		}
	}
	return out
}

func specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec {
	bs := items(l)
	out := make([]*workv1alpha2.ResourceBindingSpec, len(bs))
	for i, b := range bs {
		out[i] = Spec(b)
	}
	return out
}

// Parts returns the metadata, spec and status of a ResourceBinding or
// ClusterResourceBinding (pointers into obj). It panics on another type: a
// caller passing one is a programming error.
func Parts(obj client.Object) (*metav1.ObjectMeta, *workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.ObjectMeta, &b.Spec, &b.Status
	case *workv1alpha2.ClusterResourceBinding:
		return &b.ObjectMeta, &b.Spec, &b.Status
	}
	panic(fmt.Sprintf("bindingkind: %T is not a binding", obj))
}

// Spec returns the spec of a binding of either kind.
func Spec(obj client.Object) *workv1alpha2.ResourceBindingSpec {
	_, spec, _ := Parts(obj)
	return spec
}

// Status returns the status of a binding of either kind.
func Status(obj client.Object) *workv1alpha2.ResourceBindingStatus {
	_, _, status := Parts(obj)
	return status
}

// Of returns the kind of a binding object.
func Of(obj client.Object) Kind {
	if _, ok := obj.(*workv1alpha2.ClusterResourceBinding); ok {
		return ClusterResourceBinding{}
	}
	return ResourceBinding{}
}

// New returns an empty binding: a ClusterResourceBinding for a
// cluster-scoped template, else a ResourceBinding.
func New(clusterScoped bool) client.Object {
	if clusterScoped {
		return &workv1alpha2.ClusterResourceBinding{}
	}
	return &workv1alpha2.ResourceBinding{}
}
