package tenant

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/tenancy"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// ControllerName is the controller's name in --controllers.
const ControllerName = "tenant"

// Options configure the controller.
type Options struct {
	// Clock stamps condition transitions. Default: the real clock.
	Clock clock.PassiveClock
}

type reconciler struct {
	client client.Client
	clock  clock.PassiveClock
}

// Setup adds the controller to mgr.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	r := &reconciler{client: mgr.GetClient(), clock: opts.Clock}
	// Any tenant's change can change another's sharing and subjects, and a
	// cluster's labels or existence its cluster set: both re-resolve every
	// tenant (there are few).
	all := handler.EnqueueRequestsFromMapFunc(r.allTenants)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&tenancyv1alpha1.Tenant{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&tenancyv1alpha1.Tenant{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1alpha1.Cluster{}, all, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		Complete(r)
}

func (r *reconciler) allTenants(ctx context.Context, _ client.Object) []reconcile.Request {
	var list tenancyv1alpha1.TenantList
	if err := r.client.List(ctx, &list); err != nil {
		klog.FromContext(ctx).Error(err, "Listing tenants")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, t := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
	}
	return out
}

// Reconcile writes one tenant's resolved status when it differs.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var t tenancyv1alpha1.Tenant
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if t.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var tenants tenancyv1alpha1.TenantList
	if err := r.client.List(ctx, &tenants); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing tenants: %w", err)
	}
	var clusters clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &clusters, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing clusters: %w", err)
	}
	in := make([]*clusterv1alpha1.Cluster, 0, len(clusters.Items))
	for i := range clusters.Items {
		if clusters.Items[i].DeletionTimestamp == nil {
			in = append(in, &clusters.Items[i])
		}
	}
	st := tenancy.NewSet(tenants.Items).Status(&t, in, t.Status, metav1.NewTime(r.clock.Now()))
	if semantic.Equal(st, t.Status) {
		return ctrl.Result{}, nil
	}
	base := t.DeepCopy()
	t.Status = st
	if err := r.client.Status().Patch(ctx, &t, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(names.FieldManager)); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing the status of tenant %s: %w", t.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Tenant boundary resolved", "tenant", t.Name, "clusters", st.Clusters, "shared", st.SharedNamespaces)
	return ctrl.Result{}, nil
}
