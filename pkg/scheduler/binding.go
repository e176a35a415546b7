package scheduler

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// bindingKind adapts one of the two binding kinds, which share spec and
// status types, to the one reconciler.
type bindingKind interface {
	kind() string
	newObject() client.Object
	newList() client.ObjectList
	spec(client.Object) *workv1alpha2.ResourceBindingSpec
	status(client.Object) *workv1alpha2.ResourceBindingStatus
	requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request
}

type resourceBindingKind struct{}

func (resourceBindingKind) kind() string               { return workv1alpha2.ResourceKindResourceBinding }
func (resourceBindingKind) newObject() client.Object   { return &workv1alpha2.ResourceBinding{} }
func (resourceBindingKind) newList() client.ObjectList { return &workv1alpha2.ResourceBindingList{} }
func (resourceBindingKind) spec(o client.Object) *workv1alpha2.ResourceBindingSpec {
	return &o.(*workv1alpha2.ResourceBinding).Spec
}
func (resourceBindingKind) status(o client.Object) *workv1alpha2.ResourceBindingStatus {
	return &o.(*workv1alpha2.ResourceBinding).Status
}
func (resourceBindingKind) requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	items := l.(*workv1alpha2.ResourceBindingList).Items
	out := make([]reconcile.Request, 0, len(items))
	for i := range items {
		if filter == nil || filter(&items[i].Spec) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: items[i].Namespace, Name: items[i].Name}})
		}
	}
	return out
}

type clusterResourceBindingKind struct{}

func (clusterResourceBindingKind) kind() string {
	return workv1alpha2.ResourceKindClusterResourceBinding
}
func (clusterResourceBindingKind) newObject() client.Object {
	return &workv1alpha2.ClusterResourceBinding{}
}
func (clusterResourceBindingKind) newList() client.ObjectList {
	return &workv1alpha2.ClusterResourceBindingList{}
}
func (clusterResourceBindingKind) spec(o client.Object) *workv1alpha2.ResourceBindingSpec {
	return &o.(*workv1alpha2.ClusterResourceBinding).Spec
}
func (clusterResourceBindingKind) status(o client.Object) *workv1alpha2.ResourceBindingStatus {
	return &o.(*workv1alpha2.ClusterResourceBinding).Status
}
func (clusterResourceBindingKind) requests(l client.ObjectList, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	items := l.(*workv1alpha2.ClusterResourceBindingList).Items
	out := make([]reconcile.Request, 0, len(items))
	for i := range items {
		if filter == nil || filter(&items[i].Spec) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: items[i].Name}})
		}
	}
	return out
}
