package scheduler

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/tenancy"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// tenantBoundary is the boundary of the PropagationPolicy that claims the
// binding's template (nil: unbounded — no tenants, a cluster-scoped
// template or policy, or no reader). It is read from the claim annotations
// the detector writes on the binding and the policy's own tenant record;
// when the Tenants cannot be read the boundary is closed, never open.
func tenantBoundary(ctx context.Context, c client.Reader, obj client.Object, spec *workv1alpha2.ResourceBindingSpec) *framework.TenantBoundary {
	a := obj.GetAnnotations()
	ns, name := a[policyv1alpha1.PropagationPolicyNamespaceAnnotation], a[policyv1alpha1.PropagationPolicyNameAnnotation]
	provisioned := autoProvisionedNamespace(obj, spec)
	if c == nil || (provisioned == "" && (obj.GetNamespace() == "" || name == "")) {
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
	if provisioned != "" {
		return namespaceBoundary(set, provisioned)
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

// autoProvisionedNamespace is the namespace an auto-provision
// ClusterResourceBinding places ("" for any other binding).
func autoProvisionedNamespace(obj client.Object, spec *workv1alpha2.ResourceBindingSpec) string {
	if obj.GetNamespace() != "" || obj.GetLabels()[workv1alpha2.NamespaceAutoProvisionLabel] != "true" ||
		spec.Resource.Kind != "Namespace" || spec.Resource.APIVersion != "v1" {
		return ""
	}
	return spec.Resource.Name
}

// namespaceBoundary bounds the auto-provisioning of a namespace that
// Tenants list to the union of their cluster sets: the namespace goes
// where its tenants' workloads may go, and not to the other teams'
// clusters (docs/design/0011-tenant-boundaries.md). A namespace no tenant
// lists goes everywhere, as in Karmada.
func namespaceBoundary(set *tenancy.Set, namespace string) *framework.TenantBoundary {
	tenants := set.TenantsOf(namespace)
	if len(tenants) == 0 {
		return nil
	}
	return &framework.TenantBoundary{Tenant: strings.Join(tenants, "+"), Allows: func(c *clusterv1alpha1.Cluster) bool {
		for _, t := range tenants {
			if tn := set.Get(t); tn != nil && tenancy.InClusterSet(tn, c) {
				return true
			}
		}
		return false
	}}
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
	reschedule := func(ctx context.Context, q q, startup bool, objs ...any) {
		namespaces := tenancy.NamespacesOf(objs...)
		if len(namespaces) == 0 {
			return
		}
		if r.kind.Kind() != workv1alpha2.ResourceKindResourceBinding {
			// The auto-provision bindings of the namespaces themselves.
			for ns := range namespaces {
				enqueue(q, reconcile.Request{NamespacedName: types.NamespacedName{Name: names.BindingName("Namespace", ns)}}, 0, startup)
			}
			return
		}
		for _, req := range r.bindings(ctx, nil) {
			if namespaces[req.Namespace] {
				enqueue(q, req, 0, startup)
			}
		}
		klog.FromContext(ctx).V(1).Info("Rescheduling bindings for a tenant change", "namespaces", len(namespaces))
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q q) { reschedule(ctx, q, e.IsInInitialList, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q q) {
			o, ok1 := e.ObjectOld.(*tenancyv1alpha1.Tenant)
			n, ok2 := e.ObjectNew.(*tenancyv1alpha1.Tenant)
			if ok1 && ok2 && o.Generation == n.Generation {
				return // status only
			}
			reschedule(ctx, q, false, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q q) { reschedule(ctx, q, false, e.Object) },
	}
}
