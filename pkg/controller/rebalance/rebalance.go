package rebalance

import (
	"context"
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// ControllerName is the controller's name in --controllers.
const ControllerName = "rebalance"

// CreatedByLabel marks the Rebalances atoll created itself.
const CreatedByLabel = "apps.atoll.dev/created-by"

// Options configure the controller.
type Options struct {
	// MaxInFlight bounds the replicas all moves add at once across the
	// fleet; 0 is unlimited. Default 0 (the flag sets 1000).
	MaxInFlight int32
	// SettleWindow is how long a target must stay unchanged before a step
	// starts, so weight and replica edits arriving together make one plan.
	// Default 3s.
	SettleWindow time.Duration
	// PollInterval is how often a waiting step looks again when no event
	// wakes it. Default 5s.
	PollInterval time.Duration
	// Workers is the number of Rebalances reconciled at once. Default 4.
	Workers int
	// Clock is the controller's clock. Default: the real one.
	Clock clock.Clock
}

func (o *Options) defaults() {
	if o.SettleWindow <= 0 {
		o.SettleWindow = 3 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

type reconciler struct {
	client   client.Client
	cc       *clustercache.Cache
	opts     Options
	clock    clock.Clock
	budget   *budget
	writes   *statusWrites
	targets  *targetsSeen
	recorder recorder.EventRecorder
}

// Setup adds the controller to mgr. cc reads member HPAs' behavior (nil:
// the default window is assumed).
func Setup(_ context.Context, mgr ctrl.Manager, cc *clustercache.Cache, opts Options) error {
	opts.defaults()
	r := &reconciler{client: mgr.GetClient(), cc: cc, opts: opts, clock: opts.Clock,
		budget: newBudget(opts.MaxInFlight), writes: newStatusWrites(), targets: newTargetsSeen(), recorder: mgr.GetEventRecorder("atoll-rebalance")}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&appsv1alpha1.Rebalance{}).
		Watches(&workv1alpha2.ResourceBinding{}, r.bindingHandler()).
		Watches(&clusterv1alpha1.Cluster{}, r.clusterHandler()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers}).
		Complete(r)
}

// Reconcile drives one Rebalance; a request for a name without one is a
// binding that may need one.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var rb appsv1alpha1.Rebalance
	if err := r.client.Get(ctx, req.NamespacedName, &rb); err != nil {
		if apierrors.IsNotFound(err) {
			r.budget.release(req.NamespacedName)
			r.writes.forget(req.NamespacedName)
			r.targets.forget(req.NamespacedName)
			return r.adopt(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !rb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	res, err := r.drive(ctx, &rb)
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(2).Info("Rebalance or binding changed meanwhile, retrying", "rebalance", klog.KObj(&rb))
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return res, err
}

// adopt creates the Rebalance of a binding whose scheduler handed over a
// move (the binding's name is the request's), unless one already drives
// it; a binding left with HPA limits by a deleted Rebalance gets them
// removed.
func (r *reconciler) adopt(ctx context.Context, key client.ObjectKey) (ctrl.Result, error) {
	var b workv1alpha2.ResourceBinding
	if err := r.client.Get(ctx, key, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if owner, err := r.driver(ctx, b.Namespace, b.Name); err != nil || owner != "" {
		return ctrl.Result{}, err
	}
	v, moving := b.Annotations[rebalance.TargetAnnotation]
	if !moving {
		return ctrl.Result{}, r.writeBinding(ctx, &b, rebalance.FromTargets(b.Spec.Clusters), nil, "")
	}
	ts, err := rebalance.DecodeTarget(v)
	if err != nil {
		return ctrl.Result{}, err
	}
	if rebalance.FromTargets(ts).Equal(rebalance.FromTargets(b.Spec.Clusters)) {
		return ctrl.Result{}, r.writeBinding(ctx, &b, rebalance.FromTargets(b.Spec.Clusters), nil, "")
	}
	rb := &appsv1alpha1.Rebalance{
		ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name, Labels: map[string]string{CreatedByLabel: names.FieldManager}},
		Spec: appsv1alpha1.RebalanceSpec{Workload: appsv1alpha1.WorkloadReference{
			APIVersion: b.Spec.Resource.APIVersion, Kind: b.Spec.Resource.Kind, Name: b.Spec.Resource.Name}},
	}
	if err := r.client.Create(ctx, rb, client.FieldOwner(names.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating Rebalance %s: %w", key, err)
	}
	klog.FromContext(ctx).V(0).Info("Workload moves gradually", "rebalance", klog.KObj(rb), "target", ts)
	return ctrl.Result{}, nil
}

// driver is the name of the Rebalance driving binding ns/name: the oldest
// of those naming its workload ("" for none).
func (r *reconciler) driver(ctx context.Context, ns, binding string) (string, error) {
	var list appsv1alpha1.RebalanceList
	if err := r.client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{indexer.RebalanceBinding: binding}); err != nil {
		return "", fmt.Errorf("listing Rebalances of %s/%s: %w", ns, binding, err)
	}
	var best *appsv1alpha1.Rebalance
	for i := range list.Items {
		rb := &list.Items[i]
		if !rb.DeletionTimestamp.IsZero() {
			continue
		}
		if best == nil || rb.CreationTimestamp.Before(&best.CreationTimestamp) ||
			(rb.CreationTimestamp.Equal(&best.CreationTimestamp) && rb.Name < best.Name) {
			best = rb
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Name, nil
}

// bindingHandler maps a binding (a workload's, or its HPA's) to the
// Rebalances naming the workload, or to the binding's own name when none
// does and the scheduler handed over a move.
func (r *reconciler) bindingHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object) {
		b, ok := obj.(*workv1alpha2.ResourceBinding)
		if !ok {
			return
		}
		name := b.Name
		if b.Spec.Resource.Kind == interpreter.AutoscalerGroupKind().Kind {
			var h autoscalingv2.HorizontalPodAutoscaler
			if err := r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Resource.Name}, &h); err != nil {
				return
			}
			name = names.BindingName(h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
		}
		var list appsv1alpha1.RebalanceList
		if err := r.client.List(ctx, &list, client.InNamespace(b.Namespace), client.MatchingFields{indexer.RebalanceBinding: name}); err != nil {
			return
		}
		for i := range list.Items {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		_, moving := b.Annotations[rebalance.TargetAnnotation]
		_, limited := b.Annotations[rebalance.HPALimitsAnnotation]
		if len(list.Items) == 0 && name == b.Name && (moving || limited) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// clusterHandler wakes every unfinished Rebalance on a cluster's health
// change: a participating cluster that is not Ready pauses a step, and its
// return resumes it.
func (r *reconciler) clusterHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		var list appsv1alpha1.RebalanceList
		if err := r.client.List(ctx, &list); err != nil {
			return
		}
		for i := range list.Items {
			if !finished(list.Items[i].Status.Phase) {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			if !ok1 || !ok2 || rebalance.Healthy(o) != rebalance.Healthy(n) {
				enqueue(ctx, q)
			}
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
	}
}

// finished phases take no further steps.
func finished(p appsv1alpha1.RebalancePhase) bool {
	switch p {
	case appsv1alpha1.PhaseCompleted, appsv1alpha1.PhaseAborted, appsv1alpha1.PhaseRolledBack, appsv1alpha1.PhaseFailed:
		return true
	}
	return false
}

// writeBinding makes the binding's spec.clusters d, its HPA limits limits
// and its record of the half-step under way half, in one optimistic patch,
// when any differs.
func (r *reconciler) writeBinding(ctx context.Context, b *workv1alpha2.ResourceBinding, d rebalance.Distribution, limits rebalance.Limits, half string) error {
	encoded := limits.Encode()
	if rebalance.FromTargets(b.Spec.Clusters).Equal(d) && b.Annotations[rebalance.HPALimitsAnnotation] == encoded &&
		b.Annotations[rebalance.StepAnnotation] == half {
		return nil
	}
	base := b.DeepCopy()
	b.Spec.Clusters = d.Targets()
	rebalance.Annotate(b, rebalance.HPALimitsAnnotation, encoded)
	rebalance.Annotate(b, rebalance.StepAnnotation, half)
	if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(names.FieldManager)); err != nil {
		return fmt.Errorf("writing the step to binding %s: %w", klog.KObj(b), err)
	}
	klog.FromContext(ctx).V(1).Info("Step written", "binding", klog.KObj(b), "clusters", d.String(d.Names()), "limits", encoded)
	return nil
}

// describe names a distribution's clusters with their counts.
func describe(d rebalance.Distribution) string {
	var parts []string
	for _, c := range rebalance.Union(d) {
		parts = append(parts, fmt.Sprintf("%s=%d", c, d[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
