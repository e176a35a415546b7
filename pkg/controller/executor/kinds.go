package executor

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
)

type metaRESTMapper = meta.RESTMapper

// kind is one of the two binding kinds, with what the executor adds: the
// metadata that ties member objects to their binding.
type kind struct {
	bindingkind.Kind
}

var (
	namespacedKind = kind{bindingkind.ResourceBinding{}}
	clusterKind    = kind{bindingkind.ClusterResourceBinding{}}
)

// name is the kind in lower case, as in controller and metric names.
func (k kind) name() string { return strings.ToLower(k.Kind.Kind()) }

func (k kind) clusterScoped() bool { return k == clusterKind }

// workers is how many bindings of this kind are reconciled at once.
func (k kind) workers(opts Options) int {
	if k.clusterScoped() {
		return opts.ClusterWorkers
	}
	return opts.Workers
}

// owns reports whether a member object's annotations point at a binding of
// this kind, and which.
func (k kind) owns(a map[string]string) (types.NamespacedName, bool) {
	if k.clusterScoped() {
		name := a[workv1alpha2.ClusterResourceBindingAnnotation]
		return types.NamespacedName{Name: name}, name != ""
	}
	ns, name := a[workv1alpha2.ResourceBindingNamespaceAnnotation], a[workv1alpha2.ResourceBindingNameAnnotation]
	return types.NamespacedName{Namespace: ns, Name: name}, name != ""
}

// ownerMetadata is what the executor puts on every member object so that
// member events map back to the binding and member informers select it.
func (k kind) ownerMetadata(b client.Object) (labels, annotations map[string]string) {
	labels = map[string]string{workv1alpha2.ManagedLabel: "true"}
	annotations = map[string]string{}
	idLabel := workv1alpha2.ResourceBindingPermanentIDLabel
	if k.clusterScoped() {
		idLabel = workv1alpha2.ClusterResourceBindingPermanentIDLabel
		annotations[workv1alpha2.ClusterResourceBindingAnnotation] = b.GetName()
	} else {
		annotations[workv1alpha2.ResourceBindingNamespaceAnnotation] = b.GetNamespace()
		annotations[workv1alpha2.ResourceBindingNameAnnotation] = b.GetName()
	}
	if id := b.GetLabels()[idLabel]; id != "" {
		labels[idLabel] = id
	}
	return labels, annotations
}

// list returns the bindings of this kind, in namespace ns when set (an
// OverridePolicy never applies to cluster-scoped resources, so a namespace
// lists no ClusterResourceBindings).
func (k kind) list(ctx context.Context, c client.Client, ns string) ([]bindingRef, error) {
	if ns != "" {
		if k.clusterScoped() {
			return nil, nil
		}
		return k.listWith(ctx, c, client.InNamespace(ns))
	}
	return k.listWith(ctx, c)
}

// onCluster returns the bindings placed on cluster or whose status lists it
// (the indexer.BindingsByCluster index: a cluster event reads only those).
func (k kind) onCluster(ctx context.Context, c client.Client, cluster string) ([]bindingRef, error) {
	return k.listWith(ctx, c, client.MatchingFields{indexer.BindingsByCluster: cluster})
}

func (k kind) listWith(ctx context.Context, c client.Client, opts ...client.ListOption) ([]bindingRef, error) {
	l := k.NewList()
	if err := c.List(ctx, l, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	out := make([]bindingRef, 0, len(items))
	for _, item := range items {
		b := item.(client.Object)
		_, spec, status := bindingkind.Parts(b)
		out = append(out, refOf(b, spec, status))
	}
	return out, nil
}

// bindingRef is what the handlers and the sweep need of a binding.
type bindingRef struct {
	key      types.NamespacedName
	resource workv1alpha2.ObjectReference
	clusters []string
	// reached are the clusters its status lists.
	reached []string
}

func refOf(b client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bindingRef {
	ref := bindingRef{key: client.ObjectKeyFromObject(b), resource: spec.Resource}
	for _, t := range spec.Clusters {
		ref.clusters = append(ref.clusters, t.Name)
	}
	for _, item := range status.AggregatedStatus {
		ref.reached = append(ref.reached, item.ClusterName)
	}
	return ref
}
