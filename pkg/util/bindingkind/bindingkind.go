// Package bindingkind adapts ResourceBinding and ClusterResourceBinding,
// which share spec and status types, so that one reconciler serves both.
package bindingkind

import (
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
	items := l.(*workv1alpha2.ResourceBindingList).Items
	out := make([]reconcile.Request, 0, len(items))
	for i := range items {
		if filter == nil || filter(&items[i].Spec) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: items[i].Namespace, Name: items[i].Name}})
		}
	}
	return out
}

func (ResourceBinding) Specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec {
	items := l.(*workv1alpha2.ResourceBindingList).Items
	out := make([]*workv1alpha2.ResourceBindingSpec, len(items))
	for i := range items {
		out[i] = &items[i].Spec
	}
	return out
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
	items := l.(*workv1alpha2.ClusterResourceBindingList).Items
	out := make([]reconcile.Request, 0, len(items))
	for i := range items {
		if filter == nil || filter(&items[i].Spec) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: items[i].Name}})
		}
	}
	return out
}

func (ClusterResourceBinding) Specs(l client.ObjectList) []*workv1alpha2.ResourceBindingSpec {
	items := l.(*workv1alpha2.ClusterResourceBindingList).Items
	out := make([]*workv1alpha2.ResourceBindingSpec, len(items))
	for i := range items {
		out[i] = &items[i].Spec
	}
	return out
}
