package scheduler

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/tenancy"
)

// tenantBoundary is the boundary of the PropagationPolicy that claims the
// binding's template (nil: unbounded — no tenants, a cluster-scoped
// template or policy, or no reader). It is read from the claim annotations
// the detector writes on the binding and the policy's own tenant record;
// when the Tenants cannot be read the boundary is closed, never open.
func tenantBoundary(ctx context.Context, c client.Reader, obj client.Object) *framework.TenantBoundary {
	a := obj.GetAnnotations()
	ns, name := a[policyv1alpha1.PropagationPolicyNamespaceAnnotation], a[policyv1alpha1.PropagationPolicyNameAnnotation]
	if c == nil || obj.GetNamespace() == "" || name == "" {
		return nil
	}
	set, err := tenancy.Load(ctx, c)
	if err != nil {
		return &framework.TenantBoundary{Reason: fmt.Sprintf("the tenants could not be read: %v", err),
			Allows: func(*clusterv1alpha1.Cluster) bool { return false }}
	}
	if set.Empty() {
		return nil
	}
	var pp policyv1alpha1.PropagationPolicy
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pp); err != nil {
		// Gone or unreadable: the namespace alone decides (a shared one
		// closes).
		pp.Annotations = nil
	}
	b := set.ForPolicy(ns, pp.Annotations)
	if !b.Bounded() {
		return nil
	}
	return &framework.TenantBoundary{Tenant: b.Name(), Reason: b.Reason, Allows: b.AllowsCluster}
}

// withTenantNote adds to a successful attempt's message which clusters the
// tenant boundary kept the binding off, so that a placement narrower than
// its affinity explains itself.
func withTenantNote(msg string, sc *framework.SchedulingContext) string {
	excluded := sc.Excluded()
	if len(excluded) == 0 {
		return msg
	}
	return fmt.Sprintf("%s Tenant %s's cluster set keeps it off %s.", msg, sc.Tenant.Tenant, strings.Join(excluded, ", "))
}

// tenantHandler reschedules the bindings of the namespaces a Tenant lists
// (before and after a change): its cluster set or sharing may have moved.
func (r *reconciler) tenantHandler() handler.EventHandler {
	type q = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q q, objs ...any) {
		namespaces := tenancy.NamespacesOf(objs...)
		if len(namespaces) == 0 || r.kind.Kind() != "ResourceBinding" {
			return
		}
		for _, req := range r.bindings(ctx, nil) {
			if namespaces[req.Namespace] {
				q.Add(req)
			}
		}
		klog.FromContext(ctx).V(1).Info("Rescheduling bindings for a tenant change", "namespaces", len(namespaces))
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q q) { enqueue(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q q) {
			o, ok1 := e.ObjectOld.(*tenancyv1alpha1.Tenant)
			n, ok2 := e.ObjectNew.(*tenancyv1alpha1.Tenant)
			if ok1 && ok2 && o.Generation == n.Generation {
				return // status only
			}
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q q) { enqueue(ctx, q, e.Object) },
	}
}
