package failover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/scheduler"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// ControllerName names the controller in --controllers.
const ControllerName = "failover"

// Options configure failover. Zero values take the defaults.
type Options struct {
	// Limiter paces evictions fleet-wide (shared with the scheduler's
	// returns). Default: unlimited.
	Limiter *eviction.Limiter
	// PurgeMode is the purge mode of cluster failover when the policy's
	// failover.cluster does not say (default Gracefully).
	PurgeMode policyv1alpha1.PurgeMode
	// UnhealthyClusterThreshold pauses taint-based evictions while more
	// than this fraction of clusters is not Ready (default 0.55; 1 or more
	// never pauses).
	UnhealthyClusterThreshold float64
	// RecheckPeriod is how often a held-back eviction is tried again
	// (default 30s); cluster changes retry it at once.
	RecheckPeriod time.Duration
	// Plugins is the scheduler's plugin selection, for the check that
	// another cluster can take the replicas.
	Plugins []string
	// Workers is the number of bindings of each kind handled at once
	// (default 5).
	Workers int
	// Clock is the controller's clock (default the real one).
	Clock clock.PassiveClock
	// Shards limits failover to the bindings of the shards this process
	// holds (nil: all bindings, on the elected leader). The Limiter then
	// paces each process on its own.
	Shards *shard.Owner
}

func (o *Options) defaults() {
	if o.Limiter == nil {
		o.Limiter = eviction.NewLimiter(0, 0)
	}
	if o.PurgeMode == "" {
		o.PurgeMode = policyv1alpha1.PurgeModeGracefully
	}
	if o.UnhealthyClusterThreshold <= 0 {
		o.UnhealthyClusterThreshold = 0.55
	}
	if o.RecheckPeriod <= 0 {
		o.RecheckPeriod = 30 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 5
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// Setup adds failover for both binding kinds to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts.defaults()
	sim, err := scheduler.NewSimulator(opts.Plugins, mgr.GetClient())
	if err != nil {
		return err
	}
	if err := registerPending(ctx, mgr); err != nil {
		return err
	}
	unhealthy := newUnhealthyTracker()
	for _, k := range bindingkind.Both {
		r := &reconciler{
			client: mgr.GetClient(), kind: k, opts: opts, sim: sim, unhealthy: unhealthy,
			recorder: mgr.GetEventRecorder("atoll-failover"),
		}
		err := ctrl.NewControllerManagedBy(mgr).
			Named("failover-"+strings.ToLower(k.Kind())).
			For(k.NewObject()).
			Watches(&clusterv1alpha1.Cluster{}, r.clusterHandler()).
			WatchesRawSource(shard.BindingSource(opts.Shards, mgr.GetCache(), k.NewList)).
			WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers, NeedLeaderElection: opts.Shards.NeedLeaderElection(),
				NewQueue: queue.NewQueue[reconcile.Request](mgr.GetLogger())}).
			Complete(shard.Reconciler(opts.Shards, shard.RequestKey, reconcile.Reconciler(r)))
		if err != nil {
			return fmt.Errorf("setting up failover for %s: %w", k.Kind(), err)
		}
	}
	return nil
}

type reconciler struct {
	client    client.Client
	kind      bindingkind.Kind
	opts      Options
	sim       *scheduler.Simulator
	unhealthy *unhealthyTracker
	recorder  recorder.EventRecorder
}

// want is one eviction failover wants, or will want at due.
type want struct {
	req eviction.Request
	due time.Time
	why string
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.kind.NewObject()
	// The cache's object, not a copy: after a restart every binding comes
	// through here and nearly all have nothing to evict. It is only read;
	// setBlocked and evict change a copy of it.
	if err := r.client.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			r.unhealthy.forgetBinding(req.String())
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	spec, status := r.kind.Spec(obj), r.kind.Status(obj)
	if !obj.GetDeletionTimestamp().IsZero() || (spec.Placement == nil && len(spec.RequiredBy) > 0) || names.IsAttached(obj.GetLabels()) {
		// Attached bindings (dependencies) go where the bindings that need
		// them go; they are never evicted on their own.
		return reconcile.Result{}, nil
	}
	if _, released := obj.GetAnnotations()[workv1alpha2.ReleasedAnnotation]; released {
		// No policy claims the template: its copies stay where they are.
		return reconcile.Result{}, nil
	}
	if spec.SchedulerName == appsv1alpha1.SchedulerName {
		// A baseline belongs on every cluster it selects: a failed cluster
		// gets it back as it was, nothing moves elsewhere.
		return reconcile.Result{}, nil
	}
	clusters, err := r.clusters(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := r.opts.Clock.Now()
	wants := r.taintEvictions(ctx, spec, clusters, now)
	wants = append(wants, r.applicationEvictions(req.String(), spec, status, now)...)

	var due []want
	var next time.Time
	for _, w := range wants {
		if !w.due.After(now) {
			due = append(due, w)
		} else if next.IsZero() || w.due.Before(next) {
			next = w.due
		}
	}
	after := func(d time.Duration) reconcile.Result {
		if !next.IsZero() && (d == 0 || next.Sub(now) < d) {
			d = next.Sub(now)
		}
		return reconcile.Result{RequeueAfter: d}
	}
	if len(due) == 0 {
		return after(0), r.setBlocked(ctx, obj, nil)
	}

	if msg := preserveState(spec, status, due); msg != "" {
		cond := &metav1.Condition{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue,
			Reason: workv1alpha2.BindingReasonStateNotCollected, Message: msg}
		return after(r.opts.RecheckPeriod), r.setBlocked(ctx, obj, cond)
	}
	if reason, msg := r.holdBack(ctx, obj, due, clusters); reason != "" {
		cond := &metav1.Condition{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
		return after(r.opts.RecheckPeriod), r.setBlocked(ctx, obj, cond)
	}
	if ok, wait := r.opts.Limiter.Take(now); !ok {
		for _, w := range due {
			eviction.CountEviction(w.req.Producer, eviction.ResultRateLimited)
		}
		return after(wait), nil
	}
	if err := r.evict(ctx, obj, due, now); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
		}
		return reconcile.Result{}, err
	}
	return after(0), nil
}

// preserveState reads, for each due eviction, the state the policy's
// statePreservation asks to carry to the replacement (eviction.PreservedState),
// and says why the evictions must wait when it cannot be read yet.
func preserveState(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, due []want) string {
	for i := range due {
		rules := eviction.StatePreservationFor(spec.Failover, due[i].req.Producer)
		state, err := eviction.PreservedState(rules, status, due[i].req.Cluster)
		if err != nil {
			return fmt.Sprintf("not evicting from %s (%s) yet: the state to preserve cannot be read: %v",
				due[i].req.Cluster, due[i].why, err)
		}
		due[i].req.PreservedLabelState = state
	}
	return ""
}

// taintEvictions are the evictions NoExecute taints call for: now for an
// untolerated taint, at timeAdded + the shortest tolerationSeconds when
// every taint is tolerated for a while; none when one is tolerated
// forever.
func (r *reconciler) taintEvictions(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, clusters map[string]*clusterv1alpha1.Cluster, now time.Time) []want {
	logger := klog.FromContext(ctx)
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	mode := r.opts.PurgeMode
	if spec.Failover != nil && spec.Failover.Cluster != nil && spec.Failover.Cluster.PurgeMode != "" {
		mode = spec.Failover.Cluster.PurgeMode
	}
	var out []want
	for _, t := range spec.Clusters {
		c := clusters[t.Name]
		if c == nil {
			continue
		}
		// As Kubernetes' taint manager: the earliest finite deadline wins;
		// tolerations without tolerationSeconds never expire.
		var due time.Time
		var taints []string
		for i := range c.Spec.Taints {
			taint := &c.Spec.Taints[i]
			if taint.Effect != corev1.TaintEffectNoExecute {
				continue
			}
			taints = append(taints, taint.ToString())
			added := now
			if taint.TimeAdded != nil {
				added = taint.TimeAdded.Time
			}
			d, tolerated := untilEviction(logger, taint, tolerations, added)
			if !tolerated {
				d = now
			}
			if !d.IsZero() && (due.IsZero() || d.Before(due)) {
				due = d
			}
		}
		if due.IsZero() {
			continue // no NoExecute taint, or all tolerated forever
		}
		out = append(out, want{
			due: due,
			why: fmt.Sprintf("taint %s not tolerated", strings.Join(taints, ", ")),
			req: eviction.Request{Cluster: t.Name, PurgeMode: mode, Reason: workv1alpha2.EvictionReasonTaintUntolerated,
				Producer: workv1alpha2.EvictionProducerTaintManager,
				Message:  fmt.Sprintf("cluster %s has taint %s that the placement does not tolerate", t.Name, strings.Join(taints, ", "))},
		})
	}
	return out
}

// untilEviction returns when a NoExecute taint added at added evicts:
// added + the shortest tolerationSeconds of the tolerations that match it;
// the zero time with tolerated=true when all of those have none (forever,
// as Kubernetes' taint manager); tolerated=false when none matches.
func untilEviction(logger klog.Logger, taint *corev1.Taint, tolerations []corev1.Toleration, added time.Time) (time.Time, bool) {
	var shortest *int64
	tolerated := false
	for i := range tolerations {
		tol := &tolerations[i]
		if tol.Effect != "" && tol.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tol.ToleratesTaint(logger, taint, false) {
			continue
		}
		tolerated = true
		if tol.TolerationSeconds != nil && (shortest == nil || *tol.TolerationSeconds < *shortest) {
			shortest = tol.TolerationSeconds
		}
	}
	if !tolerated || shortest == nil {
		return time.Time{}, tolerated
	}
	return added.Add(time.Duration(max(*shortest, 0)) * time.Second), true
}

// applicationEvictions are the evictions failover.application calls for:
// the resource has been Unhealthy on a cluster for tolerationSeconds.
func (r *reconciler) applicationEvictions(key string, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, now time.Time) []want {
	if spec.Failover == nil || spec.Failover.Application == nil {
		r.unhealthy.forgetBinding(key)
		return nil
	}
	app := spec.Failover.Application
	toleration := 300 * time.Second
	if app.DecisionConditions.TolerationSeconds != nil {
		toleration = time.Duration(*app.DecisionConditions.TolerationSeconds) * time.Second
	}
	mode := app.PurgeMode
	if mode == "" {
		mode = policyv1alpha1.PurgeModeGracefully
	}
	health := map[string]workv1alpha2.ResourceHealth{}
	for _, item := range status.AggregatedStatus {
		health[item.ClusterName] = item.Health
	}
	var out []want
	var scheduled []string
	for _, t := range spec.Clusters {
		scheduled = append(scheduled, t.Name)
		if health[t.Name] != workv1alpha2.ResourceUnhealthy {
			r.unhealthy.healthy(key, t.Name)
			continue
		}
		since := r.unhealthy.unhealthySince(key, t.Name, now)
		out = append(out, want{
			due: since.Add(toleration),
			why: fmt.Sprintf("unhealthy since %s", since.UTC().Format(time.RFC3339)),
			req: eviction.Request{Cluster: t.Name, PurgeMode: mode, Reason: workv1alpha2.EvictionReasonApplicationFailure,
				Producer: workv1alpha2.EvictionProducerApplicationFailover, GracePeriodSeconds: app.GracePeriodSeconds,
				Message: fmt.Sprintf("the application has been unhealthy on cluster %s for more than %s", t.Name, toleration)},
		})
	}
	r.unhealthy.keepOnly(key, scheduled)
	return out
}

// holdBack says why the due evictions must not happen now, or "": a
// large-scale disruption pauses taint-based evictions, and no eviction
// removes a copy that no other cluster can replace.
func (r *reconciler) holdBack(ctx context.Context, obj client.Object, due []want, clusters map[string]*clusterv1alpha1.Cluster) (string, string) {
	spec, status := r.kind.Spec(obj), r.kind.Status(obj)
	byTaint := slices.ContainsFunc(due, func(w want) bool { return w.req.Producer == workv1alpha2.EvictionProducerTaintManager })
	if notReady, total := unready(clusters); byTaint && total > 0 && float64(notReady)/float64(total) > r.opts.UnhealthyClusterThreshold {
		for _, w := range due {
			eviction.CountEviction(w.req.Producer, eviction.ResultBlocked)
		}
		return workv1alpha2.BindingReasonLargeScaleDisruption, fmt.Sprintf(
			"not evicting from %s: %d of %d clusters are not Ready (more than %.0f%%), which looks like a network problem of the federation rather than of the clusters",
			clusterNames(due), notReady, total, r.opts.UnhealthyClusterThreshold*100)
	}

	trial := spec.DeepCopy()
	for _, w := range due {
		eviction.Evict(trial, w.req, r.opts.Clock.Now())
	}
	// Candidates are the clusters that could run the replicas now: healthy
	// ones, plus those the binding keeps.
	var candidates []*clusterv1alpha1.Cluster
	for _, c := range clusters {
		if eviction.ClusterHealthy(c) || slices.ContainsFunc(trial.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == c.Name }) {
			candidates = append(candidates, c)
		}
	}
	slices.SortFunc(candidates, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	res, err := r.sim.Schedule(ctx, r.kind.Kind(), obj, trial, status, candidates)
	if err == nil && len(res.Clusters) > 0 {
		return "", ""
	}
	detail := "no cluster is selected"
	if err != nil {
		detail = err.Error()
	}
	return workv1alpha2.BindingReasonNoAlternativeCluster, fmt.Sprintf(
		"not evicting from %s (%s): no other cluster can take the replicas, so the copy stays where it is: %s",
		clusterNames(due), due[0].why, detail)
}

// evict removes the due clusters from spec.clusters and records their
// tasks, in one write.
func (r *reconciler) evict(ctx context.Context, cached client.Object, due []want, now time.Time) error {
	base, obj := cached, cached.DeepCopyObject().(client.Object)
	spec := r.kind.Spec(obj)
	var done []want
	for _, w := range due {
		if eviction.Evict(spec, w.req, now) {
			done = append(done, w)
		}
	}
	if len(done) == 0 {
		return nil
	}
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(names.FieldManager)); err != nil {
		return fmt.Errorf("evicting %s from %s: %w", klog.KObj(obj), clusterNames(done), err)
	}
	for _, w := range done {
		eviction.CountEviction(w.req.Producer, eviction.ResultEvicted)
		klog.FromContext(ctx).V(0).Info("Evicted binding from cluster", "binding", klog.KObj(obj), "cluster", w.req.Cluster,
			"reason", w.req.Reason, "purgeMode", policyv1alpha1.NormalizePurgeMode(w.req.PurgeMode))
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "Evicted", "Failover",
			"Evicting from cluster %s (%s, purge mode %s): %s", w.req.Cluster, w.req.Reason,
			policyv1alpha1.NormalizePurgeMode(w.req.PurgeMode), w.req.Message)
		events.OnBindingAndTemplate(r.recorder, obj, r.kind.Spec(obj), false, events.EvictWorkloadFromClusterSucceed, "Failover",
			"Evict from cluster %s succeed.", w.req.Cluster)
	}
	return r.setBlocked(ctx, obj, nil)
}

// setBlocked sets the EvictionBlocked condition to cond, or removes it for
// nil; it writes only on change and tells with an event when an eviction
// becomes blocked.
func (r *reconciler) setBlocked(ctx context.Context, cached client.Object, cond *metav1.Condition) error {
	prev := meta.FindStatusCondition(r.kind.Status(cached).Conditions, workv1alpha2.EvictionBlocked)
	if cond == nil && prev == nil {
		return nil
	}
	if cond != nil && prev != nil && prev.Status == cond.Status && prev.Reason == cond.Reason && prev.Message == cond.Message {
		return nil
	}
	// WriteStatus writes the answer into the object it is given: a copy,
	// not the cache's.
	obj := cached.DeepCopyObject().(client.Object)
	status := r.kind.Status(obj).DeepCopy()
	if cond == nil {
		meta.RemoveStatusCondition(&status.Conditions, workv1alpha2.EvictionBlocked)
	} else {
		cond.ObservedGeneration = obj.GetGeneration()
		meta.SetStatusCondition(&status.Conditions, *cond)
	}
	if semantic.Equal(r.kind.Status(obj), status) {
		return nil
	}
	retry, err := bindingkind.WriteStatus(ctx, r.client, obj, status)
	if err != nil {
		return err
	}
	if retry > 0 {
		return nil // the binding changed; its update event brings us back
	}
	if cond != nil && (prev == nil || prev.Reason != cond.Reason) {
		klog.FromContext(ctx).V(0).Info("Eviction held back", "binding", klog.KObj(obj), "reason", cond.Reason, "message", cond.Message)
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "EvictionBlocked", "Failover", "%s", cond.Message)
	}
	return nil
}

// clusters returns the clusters by name, without those being deleted.
func (r *reconciler) clusters(ctx context.Context) (map[string]*clusterv1alpha1.Cluster, error) {
	var list clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing clusters: %w", err)
	}
	out := make(map[string]*clusterv1alpha1.Cluster, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// clusterHandler enqueues every scheduled binding when a cluster comes,
// goes, or changes its taints or readiness: the change may call for
// evictions there, and may give held-back evictions elsewhere an
// alternative or change the fleet's health fraction.
func (r *reconciler) clusterHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		list := r.kind.NewList()
		if err := r.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			klog.FromContext(ctx).Error(err, "Listing bindings for a cluster change", "kind", r.kind.Kind())
			return
		}
		for _, req := range r.kind.Requests(list, func(spec *workv1alpha2.ResourceBindingSpec) bool { return len(spec.Clusters) > 0 }) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			if !ok1 || !ok2 {
				return
			}
			if semantic.Equal(o.Spec.Taints, n.Spec.Taints) &&
				meta.IsStatusConditionTrue(o.Status.Conditions, clusterv1alpha1.ClusterConditionReady) ==
					meta.IsStatusConditionTrue(n.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return
			}
			enqueue(ctx, q)
		},
	}
}

func unready(clusters map[string]*clusterv1alpha1.Cluster) (notReady, total int) {
	for _, c := range clusters {
		total++
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			notReady++
		}
	}
	return notReady, total
}

func clusterNames(ws []want) string {
	names := make([]string, 0, len(ws))
	for _, w := range ws {
		names = append(names, w.req.Cluster)
	}
	return strings.Join(names, ", ")
}
