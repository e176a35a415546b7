package baseline

import (
	"context"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
)

// Setup adds the baseline controller and the cluster gate to mgr.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.RecheckInterval <= 0 {
		opts.RecheckInterval = 30 * time.Second
	}
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), clock: opts.Clock, opts: opts,
		recorder: mgr.GetEventRecorder("atoll-baseline")}
	ofBinding := handler.EnqueueRequestsFromMapFunc(r.baselineOfBinding)
	baselineBindings := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return bindingkind.Spec(o).SchedulerName == appsv1alpha1.SchedulerName
	}))
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Status writes of its own do not re-run a baseline; a deletion
		// (which bumps the generation) does.
		For(&appsv1alpha1.ClusterBaseline{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha2.ResourceBinding{}, ofBinding, baselineBindings).
		Watches(&workv1alpha2.ClusterResourceBinding{}, ofBinding, baselineBindings).
		Watches(&policyv1alpha1.ClusterPropagationPolicy{}, handler.EnqueueRequestsFromMapFunc(ofPolicy)).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.all(func() client.ObjectList { return &appsv1alpha1.ClusterBaselineList{} })),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, deletionChanged()))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		return err
	}
	g := &gate{client: mgr.GetClient(), recorder: mgr.GetEventRecorder("atoll-baseline")}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName+"-gate").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		// A baseline's status (a cluster's baselineReadyTime) ends a gate.
		Watches(&appsv1alpha1.ClusterBaseline{}, handler.EnqueueRequestsFromMapFunc(r.all(func() client.ObjectList { return &clusterv1alpha1.ClusterList{} }))).
		Complete(g)
}

// deletionChanged passes creations, deletions and a deletionTimestamp
// being set.
func deletionChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	}
}

// baselineOfBinding maps a baseline binding to its baseline, through the
// generated policy that claims it.
func (r *reconciler) baselineOfBinding(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[policyv1alpha1.ClusterPropagationPolicyAnnotation]
	if cb := o.GetLabels()[appsv1alpha1.BaselineLabel]; cb != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cb}}}
	}
	if name == "" {
		return nil
	}
	var p policyv1alpha1.ClusterPropagationPolicy
	if err := r.client.Get(ctx, types.NamespacedName{Name: name}, &p); err != nil {
		return nil
	}
	return ofPolicy(ctx, &p)
}

func ofPolicy(_ context.Context, o client.Object) []reconcile.Request {
	if cb := o.GetLabels()[appsv1alpha1.BaselineLabel]; cb != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cb}}}
	}
	return nil
}

// all maps any event to every object of a kind (baselines and clusters
// are few).
func (r *reconciler) all(newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := r.client.List(ctx, list); err != nil {
			klog.FromContext(ctx).Error(err, "Listing for a baseline event")
			return nil
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(items))
		for _, it := range items {
			if o, ok := it.(client.Object); ok {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: o.GetName()}})
			}
		}
		return out
	}
}
