package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/overridemanager"
)

// overridePolicies are the override policies that may apply to one
// template, read once per sync from the manager's cache.
type overridePolicies struct {
	cluster    []policyv1alpha1.ClusterOverridePolicy
	namespaced []policyv1alpha1.OverridePolicy
}

func (p *overridePolicies) empty() bool { return len(p.cluster) == 0 && len(p.namespaced) == 0 }

// overridePolicies lists the ClusterOverridePolicies and, for a namespaced
// template, the OverridePolicies of its namespace.
func (r *reconciler) overridePolicies(ctx context.Context, namespace string) (*overridePolicies, error) {
	out := &overridePolicies{}
	var cops policyv1alpha1.ClusterOverridePolicyList
	if err := r.client.List(ctx, &cops); err != nil {
		return nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
	}
	out.cluster = cops.Items
	if namespace != "" {
		var ops policyv1alpha1.OverridePolicyList
		if err := r.client.List(ctx, &ops, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("listing OverridePolicies of namespace %s: %w", namespace, err)
		}
		out.namespaced = ops.Items
	}
	return out, nil
}

// override applies the override policies for cluster to desired and records
// the applied policies in the applied-overrides annotations. The error
// names the policy and the path that failed.
func (r *reconciler) override(ctx context.Context, desired *unstructured.Unstructured, cluster string, policies *overridePolicies) (*unstructured.Unstructured, error) {
	if policies.empty() {
		return desired, nil
	}
	var c clusterv1alpha1.Cluster
	if err := r.client.Get(ctx, types.NamespacedName{Name: cluster}, &c); err != nil {
		return nil, fmt.Errorf("cluster %s: reading the Cluster for overrides: %w", cluster, err)
	}
	out, applied, err := overridemanager.Apply(desired, &c, policies.cluster, policies.namespaced)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if len(applied) > 0 {
		out.SetAnnotations(merge(out.GetAnnotations(), overridemanager.Annotations(applied)))
	}
	return out, nil
}

// overrideHandler enqueues, for a change of an override policy, the
// bindings whose resource kind its resource selectors (before and after the
// change) could select; a policy without selectors enqueues every binding
// (of its namespace, for an OverridePolicy). This first cut ignores names,
// label selectors and target clusters: the executor's hash makes the
// reconciles of unaffected bindings write nothing.
func (r *reconciler) overrideHandler() handler.EventHandler {
	type q = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q q) { r.enqueueForPolicy(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q q) {
			r.enqueueForPolicy(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q q) { r.enqueueForPolicy(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q q) { r.enqueueForPolicy(ctx, q, e.Object) },
	}
}

func (r *reconciler) enqueueForPolicy(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
	all := false
	kinds := map[string]bool{}
	namespace := ""
	for _, o := range objs {
		var spec *policyv1alpha1.OverrideSpec
		switch p := o.(type) {
		case *policyv1alpha1.OverridePolicy:
			spec, namespace = &p.Spec, p.Namespace
		case *policyv1alpha1.ClusterOverridePolicy:
			spec = &p.Spec
		default:
			return
		}
		if len(spec.ResourceSelectors) == 0 {
			all = true
		}
		for _, s := range spec.ResourceSelectors {
			kinds[s.APIVersion+"/"+s.Kind] = true
		}
	}
	refs, err := r.kind.list(ctx, r.client, namespace)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings for an override policy change")
		return
	}
	for _, ref := range refs {
		if all || kinds[ref.resource.APIVersion+"/"+ref.resource.Kind] {
			q.Add(reconcile.Request{NamespacedName: ref.key})
		}
	}
}

// clusterHandler enqueues, when a Cluster's labels or the fields a
// targetCluster can select by (provider, region, zones) change, the
// bindings placed on that cluster, provided any override policy exists;
// and when a Cluster turns Ready, the bindings that place or keep anything
// there, so work that waited for the member (a withdrawal, an apply) runs
// on reconnect instead of at the next backoff. Taints and other status
// changes do not enqueue anything.
func (r *reconciler) clusterHandler() handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			cur, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			if !ok1 || !ok2 {
				return
			}
			if selectableChanged(old, cur) {
				r.enqueueForCluster(ctx, q, cur.Name)
			}
			if !isReady(old) && isReady(cur) {
				r.unresponsive.clear(cur.Name)
				r.enqueueReached(ctx, q, cur.Name)
				r.sweeper.clusterReady(cur.Name)
			}
		},
	}
}

func isReady(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// enqueueReached enqueues the bindings placed on cluster or whose status
// lists it.
func (r *reconciler) enqueueReached(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], cluster string) {
	refs, err := r.kind.list(ctx, r.client, "")
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings for a cluster that turned Ready")
		return
	}
	for _, ref := range refs {
		if slices.Contains(ref.clusters, cluster) || slices.Contains(ref.reached, cluster) {
			q.Add(reconcile.Request{NamespacedName: ref.key})
		}
	}
}

// selectableChanged reports whether what a targetCluster selects by
// differs between two versions of a Cluster.
func selectableChanged(a, b *clusterv1alpha1.Cluster) bool {
	return !maps.Equal(a.Labels, b.Labels) || a.Spec.Provider != b.Spec.Provider || a.Spec.Region != b.Spec.Region ||
		a.Spec.Zone != b.Spec.Zone || !slices.Equal(a.Spec.Zones, b.Spec.Zones)
}

func (r *reconciler) enqueueForCluster(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], cluster string) {
	var cops policyv1alpha1.ClusterOverridePolicyList
	var ops policyv1alpha1.OverridePolicyList
	if err := r.client.List(ctx, &cops); err != nil {
		klog.FromContext(ctx).Error(err, "Listing ClusterOverridePolicies for a cluster change")
		return
	}
	if err := r.client.List(ctx, &ops); err != nil {
		klog.FromContext(ctx).Error(err, "Listing OverridePolicies for a cluster change")
		return
	}
	if len(cops.Items) == 0 && len(ops.Items) == 0 {
		return
	}
	refs, err := r.kind.list(ctx, r.client, "")
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings for a cluster change")
		return
	}
	for _, ref := range refs {
		if slices.Contains(ref.clusters, cluster) {
			q.Add(reconcile.Request{NamespacedName: ref.key})
		}
	}
}

// customizationHandler re-runs the bindings of a customization's target
// kind: their rendering, health and status may read differently now.
func (r *reconciler) customizationHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		ric, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
		if !ok {
			return
		}
		refs, err := r.kind.list(ctx, r.client, "")
		if err != nil {
			klog.FromContext(ctx).Error(err, "Listing bindings for a changed ResourceInterpreterCustomization")
			return
		}
		for _, ref := range refs {
			if ref.resource.APIVersion == ric.Spec.Target.APIVersion && ref.resource.Kind == ric.Spec.Target.Kind {
				q.Add(reconcile.Request{NamespacedName: ref.key})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
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

func (r *reconciler) overrideFailed(b client.Object, cluster string, err error) {
	r.recorder.Eventf(b, corev1.EventTypeWarning, "OverrideFailed", "Overrides for cluster %s failed: %v", cluster, err)
}
