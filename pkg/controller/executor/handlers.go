package executor

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/tenancy"
)

// memberEvent enqueues the binding a member object names. An object that
// exists is also remembered as possibly the binding's in that cluster, so a
// copy the binding status never recorded (a crash between apply and status
// write) is still withdrawn when the placement leaves the cluster; the
// withdrawal itself checks the exact ownership record. Objects of a member
// cache's first list (a restart: every copy atoll made there) are enqueued
// at low priority, behind bindings created or changed meanwhile.
func (r *reconciler) memberEvent(cluster string, obj any, exists, firstList bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key, ok := r.kind.owns(m.GetAnnotations())
	if !ok {
		return
	}
	if exists {
		r.reached.remember(key, cluster)
	}
	r.enqueue(reconcile.Request{NamespacedName: key}, firstList)
}

// enqueue adds req to the work queue, behind live work when low.
func (r *reconciler) enqueue(req reconcile.Request, low bool) {
	q := r.queue.Load()
	if q == nil {
		return
	}
	if pq, ok := (*q).(priorityqueue.PriorityQueue[reconcile.Request]); ok && low {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req)
		return
	}
	(*q).Add(req)
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

// tenantHandler re-syncs, when a Tenant's spec changes (or it comes or
// goes), the bindings of the namespaces it lists before and after, provided
// any OverridePolicy is there: which of them may override which template
// may have changed.
func (r *reconciler) tenantHandler() handler.EventHandler {
	type q = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q q, objs ...any) {
		for ns := range tenancy.NamespacesOf(objs...) {
			var ops policyv1alpha1.OverridePolicyList
			if err := r.client.List(ctx, &ops, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil || len(ops.Items) == 0 {
				continue
			}
			refs, err := r.kind.list(ctx, r.client, ns)
			if err != nil {
				klog.FromContext(ctx).Error(err, "Listing bindings for a tenant change", "namespace", ns)
				continue
			}
			for _, ref := range refs {
				q.Add(reconcile.Request{NamespacedName: ref.key})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q q) { enqueue(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q q) {
			if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() {
				enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q q) { enqueue(ctx, q, e.Object) },
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
	refs, err := r.kind.onCluster(ctx, r.client, cluster)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings for a cluster that turned Ready")
		return
	}
	for _, ref := range refs {
		q.Add(reconcile.Request{NamespacedName: ref.key})
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
	refs, err := r.kind.onCluster(ctx, r.client, cluster)
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
