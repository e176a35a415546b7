package rebalance

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// Condition reasons.
const (
	reasonStepping         = "Stepping"
	reasonWaitingForTarget = "WaitingForTarget"
	reasonSettling         = "Settling"
	reasonQueued           = "Queued"
	reasonPaused           = "Paused"
	reasonStagePause       = "StageReached"
	reasonClusterNotReady  = "ClusterNotReady"
	reasonFailover         = "FailoverInProgress"
	reasonDeadline         = "ProgressDeadlineExceeded"
	reasonCompleted        = "Completed"
	reasonAborted          = "Aborted"
	reasonRolledBack       = "RolledBack"
	reasonSuperseded       = "Superseded"
	reasonValid            = "Valid"
	reasonInvalid          = "InvalidSpec"
	reasonWorkloadNotFound = "WorkloadNotFound"
	reasonOtherRebalance   = "AnotherRebalance"
	reasonPolicyDiffers    = "HeldAwayFromPolicy"
	reasonPolicyMatches    = "MatchesPolicy"
)

// hpaSyncPeriod is the member HPA controller's default sync period, added
// to its stabilization window when a step waits for a source HPA.
const hpaSyncPeriod = 15 * time.Second

const defaultDeadline = 600 * time.Second

// run is one reconcile of one Rebalance: the object, the world it sees and
// the status being built.
type run struct {
	*reconciler
	rb    *appsv1alpha1.Rebalance
	st    *appsv1alpha1.RebalanceStatus
	w     *world
	now   metav1.Time
	batch int32
	// requeue is when to look again (0: only on events).
	requeue time.Duration
	// windows are the sources' HPA scale-down windows read this reconcile.
	windows map[string]int32
	// pending is the binding write this reconcile ends with.
	pending *bindingWrite
	// settling: the step waits for the target to settle.
	settling bool
	// deleted: the Rebalance was deleted to start over.
	deleted bool
}

// drive runs one reconcile: decide, record the decision in the status,
// then act on the binding. Recording first is what makes a crash between
// the two harmless: the next reconcile reads the half-step from the status
// and asserts it again, so it never re-asserts an older half (which would
// raise a source back: a reversal).
func (r *reconciler) drive(ctx context.Context, rb *appsv1alpha1.Rebalance) (ctrl.Result, error) {
	ru := &run{reconciler: r, rb: rb, st: rb.Status.DeepCopy(), now: metav1.NewTime(r.clock.Now())}
	err := ru.step(ctx)
	if err != nil || ru.deleted {
		return ctrl.Result{}, err
	}
	if err := ru.writeStatus(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if p := ru.pending; p != nil {
		if err := ru.writeBinding(ctx, ru.w.binding, p.clusters, p.limits, p.half); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: ru.requeue}, nil
}

// bindingWrite is what a reconcile writes to the binding once its status
// is recorded.
type bindingWrite struct {
	clusters rebalance.Distribution
	limits   rebalance.Limits
	// half is the StepAnnotation value ("" removes it).
	half string
}

// want sets what the binding must hold after this reconcile (the last call
// wins), recording the half-step under way when a step is.
func (ru *run) want(clusters rebalance.Distribution, limits rebalance.Limits) {
	ru.pending = &bindingWrite{clusters: clusters, limits: limits, half: halfOf(ru.st)}
}

// halfOf is the StepAnnotation value of a status: "3/ScalingDown", or ""
// between steps.
func halfOf(st *appsv1alpha1.RebalanceStatus) string {
	if st.StepPhase == "" || finished(st.Phase) {
		return ""
	}
	return fmt.Sprintf("%d/%s", st.Step, st.StepPhase)
}

// step decides and acts; the caller writes the status.
func (ru *run) step(ctx context.Context) error {
	rb, st := ru.rb, ru.st
	key := client.ObjectKeyFromObject(rb)
	st.ObservedGeneration = rb.Generation
	st.Binding = names.BindingName(rb.Spec.Workload.Kind, rb.Spec.Workload.Name)
	st.Summary.Workload = rb.Spec.Workload.Kind + "/" + rb.Spec.Workload.Name

	if owner, err := ru.driver(ctx, rb.Namespace, st.Binding); err != nil {
		return err
	} else if owner != rb.Name {
		ru.fail(reasonOtherRebalance, fmt.Sprintf("spec.workload: Rebalance %s already moves %s", owner, st.Summary.Workload))
		return nil
	}
	w, err := ru.observe(ctx, rb)
	if err != nil {
		return err
	}
	if w == nil {
		ru.invalid(reasonWorkloadNotFound, fmt.Sprintf("spec.workload: %s %s/%s has no ResourceBinding: the template does not exist or no policy claims it",
			rb.Spec.Workload.Kind, rb.Namespace, rb.Spec.Workload.Name))
		ru.requeue = ru.opts.PollInterval * 6
		return nil
	}
	ru.w = w
	st.HPA = w.hpa != nil
	total := max(w.running().Total(), w.target.Total())
	if ru.batch, err = rebalance.Batch(rb.Spec.MaxSurge, rb.Spec.MinBatch, total); err != nil {
		ru.invalid(reasonInvalid, err.Error())
		return nil
	}
	if w.hpa != nil && !capSources(rb) {
		// Uncapped sources shrink only if their per-pod load moves by more
		// than the HPA's 10% tolerance: a step must add more than a ninth
		// of the total (T/(T+m) < 0.9).
		ru.batch = max(ru.batch, total/9+1)
	}
	if msg := ru.checkStages(); msg != "" {
		ru.invalid(reasonInvalid, msg)
		return nil
	}

	if w.target == nil {
		switch st.Phase {
		case appsv1alpha1.PhaseProgressing, appsv1alpha1.PhasePaused:
			// The scheduler wrote a result at once (failover, or the policy
			// opted out): it owns spec.clusters now.
			ru.budget.release(key)
			ru.end(appsv1alpha1.PhaseFailed, reasonSuperseded, "the scheduler placed the workload at once (failover or an immediate policy); this move ended where it stood")
			ru.want(w.current, nil)
		case "", appsv1alpha1.PhasePending:
			ru.setPhase(appsv1alpha1.PhasePending, reasonWaitingForTarget, "waiting for the policy to change the workload's distribution")
		}
		ru.setValid()
		return nil
	}
	ru.setValid()

	if !rebalance.FromReplicas(st.PolicyTarget).Equal(w.target) &&
		(st.Phase == appsv1alpha1.PhaseAborted || st.Phase == appsv1alpha1.PhaseRolledBack) && rb.Labels[CreatedByLabel] != "" {
		// The policy or the template changed after the move was aborted or
		// rolled back: that move is over, and a fresh Rebalance (created
		// when this one is gone) moves toward the new target. A user's own
		// Rebalance stays: deleting it is theirs to do.
		klog.FromContext(ctx).V(0).Info("New target after an aborted or rolled back move; starting over", "rebalance", klog.KObj(rb))
		ru.budget.release(key)
		ru.deleted = true
		return client.IgnoreNotFound(ru.client.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}))
	}
	if !rebalance.FromReplicas(st.PolicyTarget).Equal(w.target) {
		// The first time this controller saw the target, so that a settle
		// wait that was never written to the status still ends.
		seen := metav1.NewTime(ru.targets.firstSeen(key, rebalance.EncodeTarget(w.target.Targets()), ru.now.Time))
		st.PolicyTarget = w.target.Replicas()
		st.TargetChangeTime = &seen
		if st.Phase == appsv1alpha1.PhaseCompleted || st.Phase == appsv1alpha1.PhaseFailed {
			st.Phase = "" // a new move of the same workload
		}
	}
	if st.Phase == "" || (st.Phase == appsv1alpha1.PhasePending && st.Step == 0) {
		// Nothing moved yet: the move starts from what runs now.
		ru.start()
	}
	rollbackAfterCompletion := st.Phase == appsv1alpha1.PhaseCompleted && rb.Spec.Rollback && !st.RollingBack
	if finished(st.Phase) && !rollbackAfterCompletion {
		if st.Phase != appsv1alpha1.PhaseAborted {
			ru.want(w.current, nil) // the HPA limits are lifted, even after a failed write
		}
		return nil
	}

	if rb.Spec.Abort {
		return ru.abort(ctx)
	}
	if rb.Spec.Rollback && !st.RollingBack {
		ru.rollback("spec.rollback is set")
	}
	if st.StepPhase == appsv1alpha1.StepScalingUp &&
		w.binding.Annotations[rebalance.StepAnnotation] == fmt.Sprintf("%d/%s", st.Step, appsv1alpha1.StepScalingDown) {
		// The binding already holds this step's second half (its status
		// write was coalesced away, or lost in a crash): go on from there,
		// never back to the first half.
		st.StepPhase = appsv1alpha1.StepScalingDown
	}
	if st.InFlight > 0 && st.StepPhase != "" {
		ru.budget.hold(key, st.InFlight) // after a restart
	}
	return ru.advance(ctx)
}

// start begins a move from what runs now (again, while nothing moved).
func (ru *run) start() {
	st, from := ru.st, ru.w.running()
	if st.Phase == "" {
		ru.event(corev1.EventTypeNormal, "MoveStarted", "moving %s from %s to %s", st.Summary.Workload, describe(from), describe(ru.policyFinal()))
	}
	st.From, st.Origin, st.Planned, st.Previous = from.Replicas(), from.Replicas(), from.Replicas(), nil
	st.Stage, st.Step, st.StepPhase, st.InFlight, st.RollingBack = 0, 0, "", 0, false
	st.StepStartTime, st.EstimatedCompletionTime = nil, nil
	st.Phase = appsv1alpha1.PhasePending
}

// policyFinal is where the policy wants the workload: the scheduler's
// result for plain workloads; for HPA-owned replicas, what runs now
// divided by the policy's weights.
func (ru *run) policyFinal() rebalance.Distribution {
	if ru.w.hpa == nil {
		return ru.w.target
	}
	total := rebalance.FromReplicas(ru.st.From).Total()
	if total == 0 {
		total = ru.w.running().Total()
	}
	return rebalance.Split(total, ru.w.policyWeights())
}

// total is the replica total the move's distributions divide.
func (ru *run) total() int32 {
	if ru.w.hpa == nil {
		return ru.w.target.Total()
	}
	return ru.policyFinal().Total()
}

// final is where the current stage ends.
func (ru *run) final() rebalance.Distribution {
	if ru.st.RollingBack {
		return rebalance.FromReplicas(ru.st.From)
	}
	stages := ru.rb.Spec.Stages
	if int(ru.st.Stage) < len(stages)-1 {
		return rebalance.Split(ru.total(), stages[ru.st.Stage].Weights)
	}
	return ru.policyFinal()
}

// checkStages validates the stages against the clusters and the policy.
func (ru *run) checkStages() string {
	stages := ru.rb.Spec.Stages
	for i, s := range stages {
		for _, c := range rebalance.Union(rebalance.Distribution(int32Weights(s.Weights))) {
			if ru.w.cluster(c) == nil {
				return fmt.Sprintf("spec.stages[%d].weights: cluster %q does not exist", i, c)
			}
		}
	}
	if len(stages) == 0 || ru.w.target == nil {
		return ""
	}
	last, total := stages[len(stages)-1], max(ru.total(), 100)
	want := rebalance.Split(total, ru.w.policyWeights())
	if got := rebalance.Split(total, last.Weights); !got.Equal(want) {
		return fmt.Sprintf("spec.stages[%d].weights: the last stage must give the policy's distribution: it divides %d replicas as %s, the policy as %s",
			len(stages)-1, total, describe(got), describe(want))
	}
	return ""
}

func int32Weights(m map[string]int64) map[string]int32 {
	out := make(map[string]int32, len(m))
	for k, v := range m {
		if v > 0 {
			out[k] = 1
		}
	}
	return out
}

// advance moves the current step along, or starts the next one.
func (ru *run) advance(ctx context.Context) error {
	st, rb := ru.st, ru.rb
	for range 2 * (len(rb.Spec.Stages) + 2) { // a reconcile passes stage ends, then acts once
		switch st.StepPhase {
		case appsv1alpha1.StepScalingUp:
			return ru.scalingUp(ctx)
		case appsv1alpha1.StepScalingDown:
			done, err := ru.scalingDown(ctx)
			if err != nil || !done {
				return err
			}
			continue
		}
		cur, final := rebalance.FromReplicas(st.Planned), ru.final()
		if cur.Equal(final) {
			if !st.RollingBack && int(st.Stage) < len(rb.Spec.Stages)-1 {
				st.Stage++
				if rb.Spec.Stages[st.Stage-1].Pause {
					return ru.stagePause(ctx)
				}
				continue
			}
			return ru.complete(ctx)
		}
		return ru.startStep(ctx, cur, final)
	}
	return nil
}

// held says why no new write may happen now ("" when none): a pause, or a
// participating cluster that is not Ready.
func (ru *run) held(ds ...rebalance.Distribution) (reason, msg string) {
	if ru.rb.Spec.Paused {
		if c := meta.FindStatusCondition(ru.st.Conditions, appsv1alpha1.ConditionProgressing); c != nil &&
			(c.Reason == reasonDeadline || c.Reason == reasonStagePause) && ru.st.Phase == appsv1alpha1.PhasePaused {
			return c.Reason, c.Message
		}
		return reasonPaused, "spec.paused is set; atoll rebalance resume continues"
	}
	if len(ru.w.binding.Spec.GracefulEvictionTasks) > 0 {
		return reasonFailover, "failover is evicting the workload from a cluster; the move waits and ends if the scheduler places the workload at once"
	}
	if bad := ru.w.unhealthy(ds...); len(bad) > 0 {
		return reasonClusterNotReady, fmt.Sprintf("cluster %s is not Ready or is tainted NoExecute; the step waits for it (failover takes over if it does not recover)", strings.Join(bad, ", "))
	}
	return "", ""
}

func (ru *run) startStep(ctx context.Context, cur, final rebalance.Distribution) error {
	st, rb := ru.st, ru.rb
	key := client.ObjectKeyFromObject(rb)
	if reason, msg := ru.held(cur, final); reason != "" {
		ru.setPhase(appsv1alpha1.PhasePaused, reason, msg)
		ru.requeue = ru.opts.PollInterval
		return nil
	}
	if st.TargetChangeTime != nil {
		if left := ru.opts.SettleWindow - ru.now.Sub(st.TargetChangeTime.Time); left > 0 {
			ru.setPhase(phaseWaiting(st), reasonSettling, "waiting for edits to the policy and the template to settle")
			ru.requeue = left
			ru.settling = true
			return nil
		}
	}
	if last := lastStep(st); last != nil && rb.Spec.MinStepInterval != nil {
		if left := rb.Spec.MinStepInterval.Duration - ru.now.Sub(last.StartTime.Time); left > 0 {
			ru.requeue = left
			return nil
		}
	}
	if ru.w.hpa == nil && !ru.w.current.Equal(cur) && !ru.w.current.Equal(rebalance.ScaleUp(cur, rebalance.NextStep(cur, final, ru.batch))) {
		// Someone else wrote spec.clusters between steps: step from what
		// the binding asks now, never from a stale plan.
		klog.FromContext(ctx).V(0).Info("Binding changed outside the move; stepping from it", "rebalance", klog.KObj(rb),
			"planned", describe(cur), "binding", describe(ru.w.current))
		cur = ru.w.current
		st.Planned = cur.Replicas()
	}
	next := rebalance.NextStep(cur, final, ru.batch)
	if floor := min(cur.Total(), final.Total()); next.Total() < floor {
		// Defence in depth: the planner never does this (FuzzPlan).
		return fmt.Errorf("rebalance %s: step %s -> %s would run %d replicas, below %d; not written", key, describe(cur), describe(next), next.Total(), floor)
	}
	moved := moving(cur, next)
	if !ru.budget.reserve(key, moved) {
		ru.setPhase(phaseWaiting(st), reasonQueued, fmt.Sprintf("waiting for the fleet-wide budget: %d replicas in flight, this step moves %d", ru.budget.inFlight(), moved))
		ru.requeue = ru.opts.PollInterval
		return nil
	}
	st.Previous, st.Planned = cur.Replicas(), next.Replicas()
	st.Step++
	st.StepPhase, st.StepStartTime, st.InFlight = appsv1alpha1.StepScalingUp, &ru.now, moved
	st.History = append(st.History, appsv1alpha1.StepRecord{Step: st.Step, StartTime: ru.now, Planned: next.Replicas()})
	if len(st.History) > 10 {
		st.History = st.History[len(st.History)-10:]
	}
	ru.setPhase(appsv1alpha1.PhaseProgressing, reasonStepping, fmt.Sprintf("step %d: scaling up to %s", st.Step, describe(next)))
	ru.event(corev1.EventTypeNormal, "StepStarted", "step %d: %s -> %s", st.Step, describe(cur), describe(next))
	ru.requeue = ru.opts.PollInterval
	ru.want(rebalance.ScaleUp(cur, next), ru.limits(rebalance.ScaleUp(cur, next), false))
	return nil
}

// scalingUp waits for the targets' new pods, then lets the sources shrink.
func (ru *run) scalingUp(ctx context.Context) error {
	st := ru.st
	prev, next := rebalance.FromReplicas(st.Previous), rebalance.FromReplicas(st.Planned)
	up := rebalance.ScaleUp(prev, next)
	ru.requeue = ru.opts.PollInterval
	if reason, msg := ru.held(prev, next); reason != "" {
		ru.setPhase(appsv1alpha1.PhasePaused, reason, msg)
		return nil
	}
	ru.resumed()
	// Level-based: the binding holds this half even if a crash came
	// between the status and the binding write.
	ru.want(up, ru.limits(up, false))
	if waiting := targetsWaiting(prev, next, ru.w.observed); len(waiting) > 0 {
		msg := fmt.Sprintf("step %d: waiting for the targets' new pods: %s", st.Step, strings.Join(waiting, "; "))
		ru.setPhase(appsv1alpha1.PhaseProgressing, reasonStepping, msg)
		return ru.checkDeadline(ctx, ru.deadline(false), "the target clusters' new pods did not become available: "+strings.Join(waiting, "; "))
	}
	st.StepPhase, st.StepStartTime = appsv1alpha1.StepScalingDown, &ru.now
	ru.setPhase(appsv1alpha1.PhaseProgressing, reasonStepping, fmt.Sprintf("step %d: targets available, scaling the sources down to %s", st.Step, describe(next)))
	ru.recordWindows(ctx, prev, next)
	ru.want(next, ru.limits(next, true))
	return nil
}

// resumed restarts a half-step's deadline when it continues after a pause.
func (ru *run) resumed() {
	if ru.st.Phase == appsv1alpha1.PhasePaused {
		ru.st.StepStartTime = &ru.now
		ru.setPhase(appsv1alpha1.PhaseProgressing, reasonStepping, fmt.Sprintf("step %d resumed", ru.st.Step))
	}
}

// targetsWaiting says which clusters a step grows are not yet running its
// new pods: fewer available than next, or a report that does not yet
// reflect the step (observedOf): the sources shrink only once none waits.
func targetsWaiting(prev, next rebalance.Distribution, observed map[string]observed) []string {
	var waiting []string
	for _, c := range rebalance.Union(prev, next) {
		if next[c] <= prev[c] {
			continue
		}
		switch o := observed[c]; {
		case o.ready < next[c]:
			waiting = append(waiting, fmt.Sprintf("%s has %d of %d available", c, o.ready, next[c]))
		case !o.current:
			waiting = append(waiting, fmt.Sprintf("%s has not reported the step yet (%d available before it), plan %d", c, o.ready, next[c]))
		}
	}
	return waiting
}

// scalingDown waits until every source is down to the plan; it reports
// whether the step is over.
func (ru *run) scalingDown(ctx context.Context) (bool, error) {
	st, key := ru.st, client.ObjectKeyFromObject(ru.rb)
	prev, next := rebalance.FromReplicas(st.Previous), rebalance.FromReplicas(st.Planned)
	ru.requeue = ru.opts.PollInterval
	if reason, msg := ru.held(prev, next); reason != "" {
		ru.setPhase(appsv1alpha1.PhasePaused, reason, msg)
		return false, nil
	}
	ru.resumed()
	ru.want(next, ru.limits(next, true))
	ru.ensureWindows(ctx, prev, next)
	if waiting := sourcesAbovePlan(prev, next, ru.w.observed, ru.w.hpa != nil); len(waiting) > 0 {
		msg := fmt.Sprintf("step %d: waiting for the sources to come down: %s", st.Step, strings.Join(waiting, "; "))
		ru.setPhase(appsv1alpha1.PhaseProgressing, reasonStepping, msg)
		why := "the source clusters did not come down to the plan: " + strings.Join(waiting, "; ")
		if ru.w.hpa != nil && !capSources(ru.rb) {
			why += " (the source HPA did not scale down: traffic may not follow pods, or the move per step is within the HPA's 10% tolerance)"
		}
		return false, ru.checkDeadline(ctx, ru.deadline(true), why)
	}
	if h := lastStep(st); h != nil && h.Step == st.Step {
		h.EndTime = &ru.now
	}
	st.StepPhase, st.InFlight, st.StepStartTime = "", 0, nil
	ru.budget.release(key)
	ru.event(corev1.EventTypeNormal, "StepCompleted", "step %d: now at %s", st.Step, describe(next))
	return true, nil
}

// sourcesAbovePlan says, for each cluster the step shrinks, why it is not
// down to next yet. A source that kept some replicas and reports no status
// (unreachable for a moment, or not observed since the binding changed) is
// not down: its count is unknown, and ending the step on it would let the
// next step start on capacity nobody has seen. A source the step empties
// reports nothing once withdrawn, so there only a reported count counts.
func sourcesAbovePlan(prev, next rebalance.Distribution, observed map[string]observed, hpa bool) []string {
	var waiting []string
	for _, c := range rebalance.Union(prev, next) {
		if next[c] >= prev[c] {
			continue
		}
		o := observed[c]
		switch {
		case next[c] > 0 && !o.reported:
			waiting = append(waiting, fmt.Sprintf("%s has not reported its status, plan %d", c, next[c]))
		case next[c] > 0 && o.replicas > next[c]:
			waiting = append(waiting, fmt.Sprintf("%s still runs %d pods, plan %d", c, o.replicas, next[c]))
		case hpa && next[c] > 0 && o.hpaReported && o.hpaDesired > next[c]:
			waiting = append(waiting, fmt.Sprintf("%s's HPA wants %d replicas, plan %d", c, o.hpaDesired, next[c]))
		case next[c] == 0 && o.reported && o.replicas > 0:
			waiting = append(waiting, fmt.Sprintf("%s still runs %d pods, plan 0", c, o.replicas))
		}
	}
	return waiting
}

// limits are the HPA floors and caps while the workload runs d: a cluster
// the move grows has its floor at its count in d; once the targets are
// available (shrink), a cluster the move shrinks has its cap at its count
// in d. Plain workloads have none.
func (ru *run) limits(d rebalance.Distribution, shrink bool) rebalance.Limits {
	if ru.w.hpa == nil {
		return nil
	}
	origin, final := rebalance.FromReplicas(ru.st.Origin), ru.direction()
	l := rebalance.Limits{}
	for _, c := range rebalance.Union(origin, final, d) {
		switch {
		case final[c] > origin[c] && d[c] > 0:
			l[c] = rebalance.Limit{Min: d[c]}
		case final[c] < origin[c] && d[c] > 0 && capSources(ru.rb) && (shrink || d[c] < origin[c]):
			l[c] = rebalance.Limit{Max: d[c]}
		}
	}
	return l
}

// direction is where the current direction of the move ends: from for a
// rollback, else the last stage's end.
func (ru *run) direction() rebalance.Distribution {
	if ru.st.RollingBack {
		return rebalance.FromReplicas(ru.st.From)
	}
	return ru.policyFinal()
}

func capSources(rb *appsv1alpha1.Rebalance) bool {
	return rb.Spec.CapSources == nil || *rb.Spec.CapSources
}

// deadline is how long the current half-step may take: the spec's, and,
// while member HPAs shrink the sources by themselves, never less than the
// slowest source's stabilization window plus a sync period.
func (ru *run) deadline(shrinking bool) time.Duration {
	d := defaultDeadline
	if s := ru.rb.Spec.ProgressDeadlineSeconds; s != nil {
		d = time.Duration(*s) * time.Second
	}
	if shrinking && ru.w.hpa != nil && !capSources(ru.rb) {
		var widest int32
		for _, c := range ru.st.Clusters {
			if c.ScaleDownWindowSeconds != nil {
				widest = max(widest, *c.ScaleDownWindowSeconds)
			}
		}
		for _, w := range ru.windows {
			widest = max(widest, w)
		}
		d = max(d, time.Duration(widest)*time.Second+hpaSyncPeriod)
	}
	return d
}

// checkDeadline applies onDeadline when the half-step ran longer than d.
func (ru *run) checkDeadline(ctx context.Context, d time.Duration, why string) error {
	st, rb := ru.st, ru.rb
	if st.StepStartTime == nil || ru.now.Sub(st.StepStartTime.Time) < d {
		return nil
	}
	msg := fmt.Sprintf("step %d made no progress for %s: %s", st.Step, d, why)
	ru.event(corev1.EventTypeWarning, reasonDeadline, "%s", msg)
	if rb.Spec.OnDeadline == appsv1alpha1.DeadlineRollback && !st.RollingBack {
		ru.rollback(msg)
		return nil
	}
	ru.setPhase(appsv1alpha1.PhasePaused, reasonDeadline, msg+"; atoll rebalance resume waits again")
	return ru.setPaused(ctx, true)
}

func (ru *run) stagePause(ctx context.Context) error {
	msg := fmt.Sprintf("stage %d reached (%s); atoll rebalance resume starts stage %d", ru.st.Stage, describe(rebalance.FromReplicas(ru.st.Planned)), ru.st.Stage+1)
	ru.setPhase(appsv1alpha1.PhasePaused, reasonStagePause, msg)
	ru.event(corev1.EventTypeNormal, reasonStagePause, "%s", msg)
	return ru.setPaused(ctx, true)
}

// setPaused writes spec.paused (a deadline or a stage pause sets it, so
// that resuming is the same user action as after a manual pause).
func (ru *run) setPaused(ctx context.Context, paused bool) error {
	if ru.rb.Spec.Paused == paused {
		return nil
	}
	base := ru.rb.DeepCopy()
	ru.rb.Spec.Paused = paused
	status := ru.rb.Status
	if err := ru.client.Patch(ctx, ru.rb, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(names.FieldManager)); err != nil {
		return fmt.Errorf("pausing Rebalance %s: %w", klog.KObj(ru.rb), err)
	}
	ru.rb.Status = status
	return nil
}

// rollback turns the move around: it now ends at from, stepping from what
// the binding holds now.
func (ru *run) rollback(why string) {
	st := ru.st
	here := ru.w.current
	if ru.w.hpa != nil {
		here = ru.w.running()
	}
	st.RollingBack = true
	st.Origin, st.Planned, st.Previous, st.StepPhase, st.StepStartTime = here.Replicas(), here.Replicas(), nil, "", nil
	st.InFlight = 0
	ru.budget.release(client.ObjectKeyFromObject(ru.rb))
	if st.Phase == appsv1alpha1.PhaseCompleted {
		st.Phase = appsv1alpha1.PhaseProgressing
	}
	ru.event(corev1.EventTypeNormal, "RollingBack", "moving back to %s: %s", describe(rebalance.FromReplicas(st.From)), why)
}

// abort freezes the workload where it runs: spec.clusters at what the
// members run (for plain workloads, what spec.clusters already asks), the
// HPA floors and caps as they are, so no pod is deleted because of the
// abort.
func (ru *run) abort(ctx context.Context) error {
	frozen := ru.w.current
	if ru.w.hpa != nil {
		frozen = ru.w.running()
	}
	ru.budget.release(client.ObjectKeyFromObject(ru.rb))
	ru.st.Planned, ru.st.StepPhase, ru.st.InFlight = frozen.Replicas(), "", 0
	ru.want(frozen, ru.w.limits)
	ru.end(appsv1alpha1.PhaseAborted, reasonAborted, fmt.Sprintf("aborted at %s; the policy asks %s", describe(frozen), describe(ru.policyFinal())))
	return nil
}

// complete ends the move at its final distribution and lifts the HPA
// floors and caps (the member HPAs get the weight split of the template's
// range back).
func (ru *run) complete(ctx context.Context) error {
	final := rebalance.FromReplicas(ru.st.Planned)
	ru.want(final, nil)
	ru.budget.release(client.ObjectKeyFromObject(ru.rb))
	if ru.st.RollingBack {
		ru.end(appsv1alpha1.PhaseRolledBack, reasonRolledBack, "back at "+describe(final))
		return nil
	}
	ru.end(appsv1alpha1.PhaseCompleted, reasonCompleted, "now at "+describe(final))
	return nil
}

// end sets a final phase.
func (ru *run) end(phase appsv1alpha1.RebalancePhase, reason, msg string) {
	if ru.st.Phase != phase {
		ru.event(corev1.EventTypeNormal, reason, "%s", msg)
	}
	ru.st.Phase, ru.st.EstimatedCompletionTime = phase, nil
	ru.setCondition(appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msg)
}

func (ru *run) fail(reason, msg string) {
	ru.st.Phase = appsv1alpha1.PhaseFailed
	ru.setCondition(appsv1alpha1.ConditionValid, metav1.ConditionFalse, reason, msg)
	ru.setCondition(appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msg)
}

// invalid reports a spec that cannot be acted on; nothing is written to
// the binding, and a move under way holds where it is.
func (ru *run) invalid(reason, msg string) {
	ru.setCondition(appsv1alpha1.ConditionValid, metav1.ConditionFalse, reason, msg)
	switch {
	case finished(ru.st.Phase):
	case ru.st.Step > 0:
		ru.setPhase(appsv1alpha1.PhasePaused, reason, msg)
	default:
		ru.setPhase(appsv1alpha1.PhasePending, reason, msg)
	}
}

func (ru *run) setValid() {
	ru.setCondition(appsv1alpha1.ConditionValid, metav1.ConditionTrue, reasonValid, "the spec can be acted on")
}

func (ru *run) setPhase(phase appsv1alpha1.RebalancePhase, reason, msg string) {
	ru.st.Phase = phase
	status := metav1.ConditionFalse
	if phase == appsv1alpha1.PhaseProgressing {
		status = metav1.ConditionTrue
	}
	ru.setCondition(appsv1alpha1.ConditionProgressing, status, reason, msg)
}

func (ru *run) setCondition(t string, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&ru.st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: ru.rb.Generation, LastTransitionTime: ru.now})
}

func (ru *run) event(typ, reason, format string, args ...any) {
	ru.recorder.Eventf(ru.rb, nil, typ, reason, "Rebalance", format, args...)
}

func phaseWaiting(st *appsv1alpha1.RebalanceStatus) appsv1alpha1.RebalancePhase {
	if st.Step == 0 {
		return appsv1alpha1.PhasePending
	}
	return appsv1alpha1.PhaseProgressing
}

func lastStep(st *appsv1alpha1.RebalanceStatus) *appsv1alpha1.StepRecord {
	if len(st.History) == 0 {
		return nil
	}
	return &st.History[len(st.History)-1]
}

// moving is how many replicas a step adds.
func moving(cur, next rebalance.Distribution) int32 {
	var n int32
	for _, c := range rebalance.Union(cur, next) {
		n += max(0, next[c]-cur[c])
	}
	return n
}

// ensureWindows reads the sources' HPA windows again when the status does
// not hold them yet (the write that would have carried them was coalesced).
func (ru *run) ensureWindows(ctx context.Context, prev, next rebalance.Distribution) {
	if ru.w.hpa == nil || ru.windows != nil {
		return
	}
	known := map[string]bool{}
	for _, c := range ru.st.Clusters {
		known[c.Name] = c.ScaleDownWindowSeconds != nil
	}
	for _, c := range rebalance.Union(prev, next) {
		if next[c] < prev[c] && !known[c] {
			ru.recordWindows(ctx, prev, next)
			return
		}
	}
}

// recordWindows reads the sources' HPA windows once per step.
func (ru *run) recordWindows(ctx context.Context, prev, next rebalance.Distribution) {
	if ru.w.hpa == nil {
		return
	}
	var sources []string
	for _, c := range rebalance.Union(prev, next) {
		if next[c] < prev[c] {
			sources = append(sources, c)
		}
	}
	ru.windows = ru.scaleDownWindows(ctx, ru.w, sources)
}

// writeStatus fills the observed part and writes the status if it changed.
func (ru *run) writeStatus(ctx context.Context) error {
	ru.observedStatus()
	if semantic.Equal(&ru.rb.Status, ru.st) {
		return nil
	}
	key := client.ObjectKeyFromObject(ru.rb)
	if ru.settling && ru.rb.Status.Step == ru.st.Step && ru.rb.Status.StepPhase == ru.st.StepPhase {
		// Waiting for edits to settle changes nothing worth a write; the
		// wait is remembered in memory (ru.targets).
		return nil
	}
	if !decisive(&ru.rb.Status, ru.st, ru.pending) {
		// Only observed counts and messages changed: written at most once
		// per observedInterval, so a waiting step does not turn the
		// Rebalance into a hot object.
		if left := ru.writes.wait(key, ru.now.Time); left > 0 {
			if ru.requeue == 0 || left < ru.requeue {
				ru.requeue = left
			}
			return nil
		}
	}
	base := ru.rb.DeepCopy()
	ru.rb.Status = *ru.st
	if err := ru.client.Status().Patch(ctx, ru.rb, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(names.FieldManager)); err != nil {
		return fmt.Errorf("writing the status of Rebalance %s: %w", klog.KObj(ru.rb), err)
	}
	ru.writes.wrote(key, ru.now.Time)
	return nil
}
