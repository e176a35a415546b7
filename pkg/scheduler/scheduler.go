package scheduler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/controller/workers"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
)

// ControllerName is the scheduler's name in the controller-manager's
// --controllers selection.
const ControllerName = "scheduler"

// DefaultSchedulerName is the spec.schedulerName this scheduler serves (an
// empty schedulerName means it too).
const DefaultSchedulerName = "default-scheduler"

// scheduledMessage is the message of Scheduled=True.
const scheduledMessage = "Binding has been scheduled successfully."

// conflictRetryDelay is how long a binding that another writer changed
// during an attempt waits before the next attempt.
const conflictRetryDelay = 200 * time.Millisecond

// Options configure the scheduler.
type Options struct {
	// Workers is the number of bindings of each kind scheduled at once
	// (default workers.Scheduler).
	// Default 16: an attempt takes microseconds of CPU and two round trips
	// to the API server, so a burst needs many in flight.
	Workers int
	// Plugins selects scheduler plugins, Kubernetes style ("*" all,
	// "name", "-name"). Default: all in-tree plugins.
	Plugins []string
	// Clock stamps lastScheduledTime and condition transitions. Default:
	// the real clock.
	Clock clock.PassiveClock
	// Limiter paces returns to recovered clusters, shared with failover's
	// evictions. Default: unlimited.
	Limiter *eviction.Limiter
	// GracePeriod bounds a Gracefully eviction task without its own
	// gracePeriodSeconds. Default eviction.DefaultGracePeriod.
	GracePeriod time.Duration
	// Shards limits the scheduler to the bindings of the shards this
	// process holds (nil: all bindings, on the elected leader).
	Shards *shard.Owner
	// WithdrawWhenNoFit: when no cluster matches a placed binding's
	// cluster affinity any more, clear its clusters (Karmada's behaviour)
	// instead of keeping them; a policy's WhenNoClusterFitsAnnotation
	// overrides it.
	WithdrawWhenNoFit bool
	// Handoff, when the executor runs in this process, takes the status
	// of a new placement to the executor's write of the applied status
	// instead of a write of its own (nil: the scheduler writes it).
	Handoff *bindingkind.Handoff
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = workers.Scheduler
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Limiter == nil {
		o.Limiter = eviction.NewLimiter(0, 0)
	}
	if o.GracePeriod <= 0 {
		o.GracePeriod = eviction.DefaultGracePeriod
	}
}

// Setup adds the scheduler to mgr: one controller for ResourceBindings and
// one for ClusterResourceBindings, sharing one plugin framework.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts.defaults()
	fw, err := framework.New(plugins.NewInTreeRegistry(), opts.Plugins)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(1).Info("Scheduler plugins", "plugins", fw.PluginNames())
	restored := &restoreTracker{seen: map[string]bool{}}
	for _, k := range bindingkind.Both {
		r := &reconciler{client: mgr.GetClient(), kind: k, framework: fw, clock: opts.Clock,
			limiter: opts.Limiter, gracePeriod: opts.GracePeriod, restored: restored,
			recorder: mgr.GetEventRecorder("atoll-scheduler"), withdrawWhenNoFit: opts.WithdrawWhenNoFit,
			statusHandoff: opts.Handoff}
		b := ctrl.NewControllerManagedBy(mgr).
			Named("scheduler-"+strings.ToLower(k.Kind())).
			Watches(k.NewObject(), byPriority(k), builder.WithPredicates(needsScheduling(k)))
		if k.Kind() == workv1alpha2.ResourceKindResourceBinding {
			// Workload affinity groups are namespaced: only
			// ResourceBindings have them.
			r.groups = &groupSerializer{}
			b = b.Watches(k.NewObject(), r.peerHandler())
		}
		err := b.
			Watches(&clusterv1alpha1.Cluster{}, r.clusterHandler()).
			Watches(&tenancyv1alpha1.Tenant{}, r.tenantHandler()).
			WatchesRawSource(shard.BindingSource(opts.Shards, mgr.GetCache(), k.NewList)).
			WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers, NeedLeaderElection: opts.Shards.NeedLeaderElection(),
				NewQueue: queue.NewQueue[reconcile.Request](mgr.GetLogger())}).
			Complete(shard.Reconciler(opts.Shards, shard.RequestKey, reconcile.Reconciler(r)))
		if err != nil {
			return fmt.Errorf("setting up the %s scheduler: %w", k.Kind(), err)
		}
	}
	return nil
}

type reconciler struct {
	client      client.Client
	kind        bindingkind.Kind
	framework   *framework.Framework
	clock       clock.PassiveClock
	limiter     *eviction.Limiter
	gracePeriod time.Duration
	restored    *restoreTracker
	recorder    recorder.EventRecorder
	// groups serializes the placements of workload affinity groups
	// (nil for ClusterResourceBindings).
	groups *groupSerializer
	// withdrawWhenNoFit is Options.WithdrawWhenNoFit.
	withdrawWhenNoFit bool
	// statusHandoff is Options.Handoff.
	statusHandoff *bindingkind.Handoff
}

// Reconcile schedules one binding: get → skip if not ours → compute →
// write spec.clusters if it differs → write status if it differs.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	obj := r.kind.NewObject()
	// The cache's object, not a copy: after a restart every binding is
	// scheduled again and nearly every result is the same. An attempt only
	// reads it; schedule changes copies.
	if err := r.client.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	if reason := skipReason(obj, r.kind.Spec(obj), r.kind.Status(obj)); reason != "" {
		logger.V(2).Info("Not scheduling binding", "binding", klog.KObj(obj), "reason", reason)
		return ctrl.Result{}, nil
	}

	unlock := r.groups.lock(r.kind.Spec(obj))
	defer unlock()
	start := r.clock.Now()
	result, requeue, err := r.schedule(ctx, obj)
	latencySeconds.Observe(r.clock.Since(start).Seconds())
	attemptsTotal.WithLabelValues(result).Inc()
	if apierrors.IsConflict(err) {
		// Someone else wrote the binding since the cache saw it; the next
		// attempt reads their version once the cache has it. Routine, so no
		// error log and no exponential backoff.
		logger.V(2).Info("Binding changed while scheduling, retrying", "binding", klog.KObj(obj), "err", err)
		if stalewrites.IsStale(err) {
			// Known without a request: the cache is seconds behind.
			return ctrl.Result{RequeueAfter: stalewrites.Retry}, nil
		}
		return ctrl.Result{RequeueAfter: conflictRetryDelay}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// schedule runs one attempt and writes its outcome; it returns the metric
// result, when to look again (eviction tasks waiting for a grace period or
// a rate-limited return), and an error only for what a retry can fix (API
// errors).
func (r *reconciler) schedule(ctx context.Context, obj client.Object) (string, time.Duration, error) {
	logger := klog.FromContext(ctx)
	clusters, err := r.clusters(ctx)
	if err != nil {
		return resultError, 0, err
	}
	spec := r.kind.Spec(obj)
	workloads, err := workloadGroups(ctx, r.client, obj, spec)
	if err != nil {
		return resultError, 0, err
	}
	a := r.run(ctx, obj, clusters, workloads)
	sc, res, schedErr := a.sc, a.res, a.err

	result := resultScheduled
	var fitErr *framework.FitError
	var cond metav1.Condition
	switch {
	case schedErr == nil:
		cond = metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue,
			Reason: workv1alpha2.BindingReasonSuccess, Message: withTenantNote(scheduledMessage, sc)}
	case errors.As(schedErr, &fitErr):
		result = resultUnschedulable
		cond = metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
			Reason: fitErr.Reason(), Message: schedErr.Error()}
		logger.V(1).Info("Binding is unschedulable", "binding", klog.KObj(obj), "message", schedErr.Error())
	default:
		// Deterministic for this binding and these clusters: report it and
		// wait for a change of either instead of retrying.
		result = resultError
		cond = metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
			Reason: workv1alpha2.BindingReasonSchedulerError, Message: schedErr.Error()}
		logger.Info("Scheduling binding failed", "binding", klog.KObj(obj), "err", schedErr)
	}

	var resultChanged, targetChanged bool
	var target string
	if schedErr == nil {
		resultChanged, targetChanged, target = r.handoff(ctx, obj, spec, res.Clusters, clusters)
	} else if len(spec.Clusters) > 0 && deselected(schedErr, spec.Clusters) && r.withdrawsWhenNoFit(ctx, obj) {
		// Karmada's behaviour, opted into: the user's selection left every
		// placed cluster, so the workload leaves them.
		res = &framework.Result{}
		resultChanged = true
		logger.V(0).Info("No cluster matches the placement any more; withdrawing", "binding", klog.KObj(obj), "from", resultString(spec.Clusters))
	}
	if resultChanged || targetChanged || a.tasksChanged() {
		base := obj
		obj = obj.DeepCopyObject().(client.Object)
		spec = r.kind.Spec(obj)
		if resultChanged {
			spec.Clusters = res.Clusters
		}
		if targetChanged {
			rebalance.Annotate(obj, rebalance.TargetAnnotation, target)
			logger.V(1).Info("Binding moves gradually", "binding", klog.KObj(obj), "target", res.Clusters)
		}
		if a.tasksChanged() {
			// a.tasks is a new slice then; unchanged, it is the cache's,
			// which the patch's answer must not be decoded into.
			spec.GracefulEvictionTasks = a.tasks
		}
		if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner(names.FieldManager)); err != nil {
			return resultError, 0, fmt.Errorf("writing spec.clusters of %s %s: %w", r.kind.Kind(), klog.KObj(obj), err)
		}
		if resultChanged {
			logger.V(1).Info("Scheduled binding", "binding", klog.KObj(obj), "clusters", res.Clusters)
			if workloads != nil {
				awaitCache(ctx, r.client, obj)
			}
		}
		if a.tasksChanged() {
			logger.V(0).Info("Eviction tasks ended", "binding", klog.KObj(obj), "returnedTo", a.returned, "completed", len(a.completed))
			r.recordTaskEvents(obj, a)
		}
	}

	// obj may still be the cache's: the new status is built on a copy of
	// the status alone, and WriteStatus gets a copy of obj to write into.
	spec, current := r.kind.Spec(obj), r.kind.Status(obj)
	status := current.DeepCopy()
	// A part handed to the executor counts as written while it is pending.
	pending, hasPending := r.statusHandoff.Pending(obj.GetUID(), obj.GetGeneration())
	if hasPending {
		pending.ApplyTo(status)
	}
	now := statusTime(r.clock)
	status.SchedulerObservedGeneration = obj.GetGeneration()
	status.SchedulerObservedAffinityName = sc.AffinityName
	scheduled := schedErr == nil && (resultChanged || targetChanged || status.LastScheduledTime == nil || rescheduleRequested(spec, status))
	if scheduled {
		status.LastScheduledTime = &now
	}
	prev := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled)
	failedAnew := schedErr != nil && (prev == nil || prev.Status != cond.Status || prev.Message != cond.Message)
	cond.ObservedGeneration = obj.GetGeneration()
	cond.LastTransitionTime = now
	meta.SetStatusCondition(&status.Conditions, cond)
	part := bindingkind.ScheduledOf(status, obj.GetGeneration())
	if r.statusHandoff != nil && schedErr == nil && (resultChanged || executorWillWrite(obj, spec, current, hasPending, targetChanged || a.tasksChanged())) {
		// The executor's next write of this generation's status carries
		// the Scheduled condition too (one write, not two).
		part.Since = now.Time
		r.statusHandoff.Put(obj.GetUID(), part)
		handoffsTotal.WithLabelValues("handed").Inc()
		if scheduled {
			events.OnBindingAndTemplate(r.recorder, obj, spec, false, events.ScheduleBindingSucceed, "Schedule",
				"Binding has been scheduled successfully. Result: %s", resultString(spec.Clusters))
		}
		return result, sooner(a.requeue, r.statusHandoff.Timeout()), nil
	}
	if hasPending && part.Same(pending) {
		if left := r.statusHandoff.Left(pending, bindingkind.ExecutorSynced(current, obj.GetGeneration()), now.Time); left > 0 {
			// Looked at again every Timeout: the executor taking the
			// binding up shortens the wait.
			return result, sooner(a.requeue, min(left, r.statusHandoff.Timeout())), nil
		}
		if !semantic.Equal(current, status) {
			// The executor has not written it in time.
			handoffsTotal.WithLabelValues("timed-out").Inc()
		}
	}
	var retry time.Duration
	if !semantic.Equal(current, status) {
		var werr error
		if retry, werr = bindingkind.WriteStatus(ctx, r.client, obj.DeepCopyObject().(client.Object), status); werr != nil {
			return resultError, 0, werr
		}
	}
	if retry == 0 {
		r.statusHandoff.Done(obj.GetUID(), obj.GetGeneration())
		// Karmada's events, on a new result or a new failure only.
		switch {
		case scheduled:
			events.OnBindingAndTemplate(r.recorder, obj, spec, false, events.ScheduleBindingSucceed, "Schedule",
				"Binding has been scheduled successfully. Result: %s", resultString(spec.Clusters))
		case failedAnew:
			events.OnBindingAndTemplate(r.recorder, obj, spec, true, events.ScheduleBindingFailed, "Schedule", "%s", schedErr.Error())
		}
	}
	if retry > 0 {
		return result, sooner(a.requeue, retry), nil
	}
	return result, a.requeue, nil
}

// executorWillWrite reports whether the executor is about to write the
// status of obj's generation with the placement unchanged: a generation
// the scheduler has not observed (the detector wrote a template change
// into the spec) of a placed binding, which the executor takes up and has
// not written yet. Its write then carries the scheduler's part, instead
// of two writes of one status racing each other (design 0013, decision
// 50). Not for a part already pending (its wait decides), nor when this
// attempt wrote something itself (a gradual move's target, eviction
// tasks): those write their status as before.
func executorWillWrite(obj client.Object, spec *workv1alpha2.ResourceBindingSpec, current *workv1alpha2.ResourceBindingStatus,
	hasPending, wroteSomething bool) bool {
	gen := obj.GetGeneration()
	return !hasPending && !wroteSomething && len(spec.Clusters) > 0 &&
		current.SchedulerObservedGeneration < gen && !bindingkind.ExecutorSynced(current, gen)
}

// statusTime is the clock's time as the API server keeps a metav1.Time
// (RFC 3339, whole seconds). The status and the part handed to the
// executor are compared later with what the server stored; with the
// clock's nanoseconds they differ from it where nothing changed, and the
// write that follows changes nothing (atoll_controller_unchanged_writes_total).
func statusTime(c clock.PassiveClock) metav1.Time {
	return metav1.NewTime(c.Now()).Rfc3339Copy()
}

// sooner returns the sooner of two requeue delays, 0 meaning none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// clusters lists the clusters from the cache, sorted by name, without the
// ones being deleted. The objects are shared with the cache (no deep copy:
// an attempt only reads them).
func (r *reconciler) clusters(ctx context.Context) ([]*clusterv1alpha1.Cluster, error) {
	var list clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing clusters: %w", err)
	}
	out := make([]*clusterv1alpha1.Cluster, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// clusterHandler maps Cluster events to bindings. Creation, deletion and
// changes that can move any result (clusterChanged) enqueue every binding
// of the kind, unschedulable ones included. A change of the resource
// summary alone enqueues only the bindings that divide by available
// replicas (dynamic weights, Aggregated), so summary churn does not
// reschedule static or duplicated bindings. Anything else (heartbeats)
// enqueues nothing.
func (r *reconciler) clusterHandler() handler.EventHandler {
	all := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], filter func(*workv1alpha2.ResourceBindingSpec) bool, startup bool) {
		for _, req := range r.bindings(ctx, filter) {
			enqueue(q, req, 0, startup)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// The start-up list of Clusters enqueues every binding; a
			// binding created meanwhile goes first.
			all(ctx, q, nil, e.IsInInitialList)
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, q, nil, false)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			switch {
			case !ok1 || !ok2 || clusterChanged(o, n):
				all(ctx, q, nil, false)
			case summaryChanged(o, n):
				all(ctx, q, func(spec *workv1alpha2.ResourceBindingSpec) bool {
					return framework.UsesAvailableReplicas(spec.Placement)
				}, false)
			}
		},
	}
}

// bindings lists the bindings of the kind (those filter accepts; all for
// a nil filter) as requests.
func (r *reconciler) bindings(ctx context.Context, filter func(*workv1alpha2.ResourceBindingSpec) bool) []reconcile.Request {
	list := r.kind.NewList()
	if err := r.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings for a cluster change", "kind", r.kind.Kind())
		return nil
	}
	return r.kind.Requests(list, filter)
}

// startupBand lowers the events of a start-up list (a restart's thousands
// of bindings, all placed already) below every live event, keeping their
// own order: a binding created or changed meanwhile is scheduled first
// (DESIGN.md section 4, rule 4). schedulePriority is an int32, so the two
// bands never meet.
const startupBand = 1 << 32

// enqueue adds req at priority, in the start-up band for events of a
// start-up list.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, priority int, startup bool) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		q.Add(req)
		return
	}
	if startup {
		priority -= startupBand
	}
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, req)
}

// skipReason says why this scheduler leaves a binding alone, or "".
// WillSchedule reports whether the default scheduler places binding b
// (other controllers wait for its first decision instead of acting on an
// empty placement).
func WillSchedule(b metav1.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	return skipReason(b, spec, status) == ""
}

func skipReason(b metav1.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) string {
	if _, ok := b.GetAnnotations()[workv1alpha2.ReleasedAnnotation]; ok {
		// No policy claims the template: its placement stays as it was.
		return "released"
	}
	if spec.SchedulerName != "" && spec.SchedulerName != DefaultSchedulerName {
		return "schedulerName " + spec.SchedulerName
	}
	if spec.Suspension != nil && spec.Suspension.Scheduling != nil && *spec.Suspension.Scheduling {
		return "scheduling suspended"
	}
	if interpreter.ReplicasUnknown(status.Conditions) {
		// The kind's replicaResource script fails: dividing a count that
		// was never read would place the wrong replicas.
		return "replicas unknown: the replicaResource script fails"
	}
	if names.IsAttached(b.GetLabels()) && len(spec.RequiredBy) == 0 {
		// A dependency no workload requires any more, kept because it holds
		// data: it stays where it is.
		return "attached, required by nothing"
	}
	if spec.Placement == nil && len(spec.RequiredBy) > 0 {
		// An attached binding (a dependency such as a ConfigMap) goes exactly
		// where the bindings that require it go; the dependencies
		// controller writes its clusters.
		return "attached to " + spec.RequiredBy[0].Name
	}
	return ""
}

// rescheduleRequested reports whether rescheduleTriggeredAt asks for an
// attempt after the last one.
func rescheduleRequested(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	return spec.RescheduleTriggeredAt != nil &&
		(status.LastScheduledTime == nil || status.LastScheduledTime.Before(spec.RescheduleTriggeredAt))
}

// sameTargets compares two results as sets of (cluster, replicas), so a
// result written in another order by another tool is not rewritten.
func sameTargets(a, b []workv1alpha2.TargetCluster) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[string]int32, len(a))
	for _, t := range a {
		if len(t.Components) > 0 {
			return false
		}
		m[t.Name] = t.Replicas
	}
	for _, t := range b {
		if r, ok := m[t.Name]; !ok || r != t.Replicas || len(t.Components) > 0 {
			return false
		}
	}
	return true
}

// needsScheduling passes binding events that may need an attempt: new
// objects, spec changes, and status updates that leave a generation
// unobserved by the scheduler.
//
// A spec change that touches only spec.clusters does not pass: it is the
// scheduler's own write (whose status write follows in the same
// reconcile, or is handed to the executor), or another tool adjusting the result, which Karmada's
// scheduler leaves alone too (its descheduler relies on that). Letting our
// own write through would start a second attempt on a cache that has not
// seen the status write yet, and end in a conflict.
func needsScheduling(k bindingkind.Kind) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectNew.GetGeneration() == e.ObjectOld.GetGeneration() {
				if len(k.Spec(e.ObjectNew).GracefulEvictionTasks) > 0 {
					// Eviction tasks end on the replacement's health.
					return true
				}
				return k.Status(e.ObjectNew).SchedulerObservedGeneration < e.ObjectNew.GetGeneration()
			}
			oldSpec, newSpec := *k.Spec(e.ObjectOld), *k.Spec(e.ObjectNew)
			oldSpec.Clusters, newSpec.Clusters = nil, nil
			return !semantic.Equal(oldSpec, newSpec)
		},
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}

// clusterChanged reports a Cluster change that can move any scheduling
// result: labels, spec (provider, region, zones, taints …), API
// enablements, condition statuses or the deletion timestamp. Resource
// summaries (summaryChanged) matter only to bindings that divide by
// available replicas; heartbeat timestamps to none.
func clusterChanged(o, n *clusterv1alpha1.Cluster) bool {
	if !semantic.Equal(o.Labels, n.Labels) ||
		!semantic.Equal(o.Spec, n.Spec) ||
		!semantic.Equal(o.Status.APIEnablements, n.Status.APIEnablements) ||
		o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() {
		return true
	}
	return !maps.Equal(conditionStatuses(o), conditionStatuses(n))
}

func conditionStatuses(c *clusterv1alpha1.Cluster) map[string]metav1.ConditionStatus {
	m := make(map[string]metav1.ConditionStatus, len(c.Status.Conditions))
	for _, cond := range c.Status.Conditions {
		m[cond.Type] = cond.Status
	}
	return m
}

// summaryChanged reports a change of status.resourceSummary.
func summaryChanged(o, n *clusterv1alpha1.Cluster) bool {
	return !semantic.Equal(o.Status.ResourceSummary, n.Status.ResourceSummary)
}

// handoff decides how a new result reaches the binding: written to
// spec.clusters at once (resultChanged), or, for a gradual move, recorded
// as the rebalance target (targetChanged, with the annotation's new value,
// "" to remove it) while spec.clusters stays for the rebalance controller
// to move. An immediate write also ends a move's target.
func (r *reconciler) handoff(ctx context.Context, obj client.Object, spec *workv1alpha2.ResourceBindingSpec,
	result []workv1alpha2.TargetCluster, clusters []*clusterv1alpha1.Cluster) (resultChanged, targetChanged bool, target string) {
	current, hasTarget := obj.GetAnnotations()[rebalance.TargetAnnotation]
	// Rebalances are namespaced: a ClusterResourceBinding (a cluster-scoped
	// workload, rare with replicas) moves at once, as before.
	if obj.GetNamespace() != "" && rebalance.Gradual(rebalance.FromTargets(spec.Clusters), rebalance.FromTargets(result), hasTarget, r.optedOut(ctx, obj), spec, clusters) {
		target = rebalance.EncodeTarget(result)
		return false, target != current, target
	}
	return !sameTargets(spec.Clusters, result), hasTarget, ""
}

// optedOut reports whether the policy claiming the binding's template
// asks for immediate moves (rebalance.ModeAnnotation).
func (r *reconciler) optedOut(ctx context.Context, obj client.Object) bool {
	policy := r.policyOf(ctx, obj)
	return policy != nil && policy.GetAnnotations()[rebalance.ModeAnnotation] == rebalance.ModeImmediate
}

// policyOf reads the (Cluster)PropagationPolicy claiming the binding's
// template from the cache (nil: none, or gone).
func (r *reconciler) policyOf(ctx context.Context, obj client.Object) client.Object {
	a := obj.GetAnnotations()
	var policy client.Object
	var key client.ObjectKey
	switch {
	case a[policyv1alpha1.PropagationPolicyNameAnnotation] != "":
		policy = &policyv1alpha1.PropagationPolicy{}
		key = client.ObjectKey{Namespace: a[policyv1alpha1.PropagationPolicyNamespaceAnnotation], Name: a[policyv1alpha1.PropagationPolicyNameAnnotation]}
	case a[policyv1alpha1.ClusterPropagationPolicyAnnotation] != "":
		policy = &policyv1alpha1.ClusterPropagationPolicy{}
		key = client.ObjectKey{Name: a[policyv1alpha1.ClusterPropagationPolicyAnnotation]}
	default:
		return nil
	}
	if err := r.client.Get(ctx, key, policy); err != nil {
		return nil
	}
	return policy
}

// resultString is a placement as Karmada's schedule event prints it:
// {member1:2, member2:1}.
func resultString(clusters []workv1alpha2.TargetCluster) string {
	parts := make([]string, len(clusters))
	for i, c := range clusters {
		parts[i] = fmt.Sprintf("%s:%d", c.Name, c.Replicas)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// byPriority enqueues a binding's own events at its
// spec.schedulePriority.priority, so that of the bindings waiting, the
// higher-priority ones are scheduled first (Karmada's priority-based
// scheduling; the detector resolves the policy's PriorityClass). Events
// of the start-up list go below every live event (enqueue).
func byPriority(k bindingkind.Kind) handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], startup bool) {
		priority := 0
		if sp := k.Spec(o).SchedulePriority; sp != nil {
			priority = int(sp.Priority)
		}
		enqueue(q, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}, priority, startup)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q, e.IsInInitialList)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectNew, q, false)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q, false)
		},
	}
}
