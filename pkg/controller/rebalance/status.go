package rebalance

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// defaultStepTime is the ETA's guess of a step's length before any step
// has ended: a pod start and a status round.
const defaultStepTime = 30 * time.Second

// observedStatus fills the status parts that come from observation: the
// per-cluster view, the summary, the ETA and PolicyDiffers.
func (ru *run) observedStatus() {
	st, w := ru.st, ru.w
	if w == nil {
		return
	}
	current := rebalance.FromTargets(w.binding.Spec.Clusters)
	limits, _ := rebalance.ParseLimits(w.binding.Annotations[rebalance.HPALimitsAnnotation])
	from, planned := rebalance.FromReplicas(st.From), rebalance.FromReplicas(st.Planned)
	to := planned
	if w.target != nil && !finished(st.Phase) {
		to = ru.direction()
	} else if len(st.To) > 0 {
		to = rebalance.FromReplicas(st.To)
	}
	st.To = to.Replicas()

	var bounds map[string]rebalance.Bounds
	if w.hpa != nil {
		lo := int32(1)
		if w.hpa.Spec.MinReplicas != nil {
			lo = *w.hpa.Spec.MinReplicas
		}
		bounds = rebalance.HPABounds(current, lo, w.hpa.Spec.MaxReplicas, limits)
		st.HPAEffectiveMin = ptr.To(rebalance.EffectiveMin(bounds))
	}
	old := map[string]appsv1alpha1.ClusterProgress{}
	for _, c := range st.Clusters {
		old[c.Name] = c
	}
	st.Clusters = nil
	for _, c := range rebalance.Union(from, to, planned, current) {
		o := w.observed[c]
		cp := appsv1alpha1.ClusterProgress{Name: c, Planned: planned[c], Spec: current[c], Ready: o.ready,
			ScaleDownWindowSeconds: old[c].ScaleDownWindowSeconds}
		if w.hpa != nil {
			cp.Spec = o.replicas
			if b, ok := bounds[c]; ok {
				cp.HPAMin, cp.HPAMax = ptr.To(b.Min), ptr.To(b.Max)
			}
			if o.hpaReported {
				cp.HPADesired = ptr.To(o.hpaDesired)
			}
			if win, ok := ru.windows[c]; ok {
				cp.ScaleDownWindowSeconds = ptr.To(win)
			}
		}
		st.Clusters = append(st.Clusters, cp)
	}

	names := rebalance.Union(from, to)
	st.Summary.From, st.Summary.To = from.String(names), to.String(names)
	done := planned
	if st.StepPhase != "" {
		done = rebalance.FromReplicas(st.Previous)
	}
	origin := rebalance.FromReplicas(st.Origin)
	var need, got int32
	for _, c := range rebalance.Union(origin, to) {
		if to[c] > origin[c] {
			need += to[c] - origin[c]
			got += max(0, min(done[c], to[c])-origin[c])
		}
	}
	percent := int32(100)
	if need > 0 && st.Phase != appsv1alpha1.PhaseCompleted && st.Phase != appsv1alpha1.PhaseRolledBack {
		percent = 100 * got / need
	}
	st.Summary.Progress = fmt.Sprintf("%d%%", percent)

	remaining := int32(0)
	if !finished(st.Phase) && w.target != nil {
		remaining = int32(len(rebalance.Plan(done, to, ru.batch)))
		if st.StepPhase != "" {
			remaining-- // the current step is in both counts
		}
		remaining = max(remaining, 0)
	}
	st.Summary.Step = fmt.Sprintf("%d/%d", st.Step, st.Step+remaining)
	// The ETA is recomputed when the move reaches a new half-step, not on
	// every look, so waiting does not rewrite the status.
	prev := &ru.rb.Status
	switch {
	case st.Phase != appsv1alpha1.PhaseProgressing:
		st.EstimatedCompletionTime = nil
	case st.EstimatedCompletionTime == nil || prev.Step != st.Step || prev.StepPhase != st.StepPhase || prev.Phase != st.Phase:
		left := stepTime(st) * time.Duration(remaining)
		if st.StepPhase != "" && st.StepStartTime != nil {
			left += max(0, stepTime(st)-ru.now.Sub(st.StepStartTime.Time))
		}
		st.EstimatedCompletionTime = ptr.To(metav1.NewTime(ru.now.Add(left).Truncate(time.Second)))
	}

	differs := (st.Phase == appsv1alpha1.PhaseAborted || st.Phase == appsv1alpha1.PhaseRolledBack || st.RollingBack) &&
		w.target != nil && !ru.running().Equal(ru.policyFinal())
	if differs {
		ru.setCondition(appsv1alpha1.ConditionPolicyDiffers, metav1.ConditionTrue, reasonPolicyDiffers,
			fmt.Sprintf("the policy asks %s; the workload is held at %s; change the policy or delete this Rebalance to move on",
				describe(ru.policyFinal()), describe(ru.running())))
	} else if meta.FindStatusCondition(st.Conditions, appsv1alpha1.ConditionPolicyDiffers) != nil {
		ru.setCondition(appsv1alpha1.ConditionPolicyDiffers, metav1.ConditionFalse, reasonPolicyMatches, "the workload runs what the policy asks")
	}
}

// running is what runs now, as observed.
func (ru *run) running() rebalance.Distribution {
	if ru.w.hpa != nil {
		return ru.w.running()
	}
	return rebalance.FromTargets(ru.w.binding.Spec.Clusters)
}

// stepTime is the mean length of the steps that ended, or a default.
func stepTime(st *appsv1alpha1.RebalanceStatus) time.Duration {
	var sum time.Duration
	var n int
	for _, h := range st.History {
		if h.EndTime != nil {
			sum += h.EndTime.Sub(h.StartTime.Time)
			n++
		}
	}
	if n == 0 {
		return defaultStepTime
	}
	return sum / time.Duration(n)
}

// observedInterval bounds how often a Rebalance status is written for
// observed counts alone.
const observedInterval = 5 * time.Second

// decisive reports whether the new status records a decision (phase, step,
// plan, conditions' status or reason, ...) rather than only fresher
// observations (per-cluster counts, summary, ETA, condition messages).
// Decisions are always written at once, except a step's second half when
// the binding write records it (pending carries the StepAnnotation), so a
// step costs one status write, not two.
func decisive(old, cur *appsv1alpha1.RebalanceStatus, pending *bindingWrite) bool {
	secondHalf := pending != nil && old.Step == cur.Step && old.StepPhase == appsv1alpha1.StepScalingUp &&
		cur.StepPhase == appsv1alpha1.StepScalingDown && pending.half == halfOf(cur)
	strip := func(s *appsv1alpha1.RebalanceStatus) *appsv1alpha1.RebalanceStatus {
		c := s.DeepCopy()
		c.Clusters, c.Summary, c.EstimatedCompletionTime, c.HPAEffectiveMin = nil, appsv1alpha1.Summary{}, nil, nil
		if secondHalf {
			c.StepPhase, c.StepStartTime = "", nil
		}
		for i := range c.Conditions {
			c.Conditions[i].Message, c.Conditions[i].LastTransitionTime = "", metav1.Time{}
		}
		return c
	}
	return !semantic.Equal(strip(old), strip(cur))
}

// targetsSeen remembers when this controller first saw each Rebalance's
// current target, so that waiting for edits to settle needs no status
// write (a restart only restarts the wait).
type targetsSeen struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]seenTarget
}

type seenTarget struct {
	target string
	at     time.Time
}

func newTargetsSeen() *targetsSeen {
	return &targetsSeen{seen: map[types.NamespacedName]seenTarget{}}
}

// firstSeen is when target was first seen for key (now, if it is new).
func (t *targetsSeen) firstSeen(key types.NamespacedName, target string, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.seen[key]; ok && s.target == target {
		return s.at
	}
	t.seen[key] = seenTarget{target: target, at: now}
	return now
}

func (t *targetsSeen) forget(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.seen, key)
}

// statusWrites remembers when each Rebalance's status was last written.
type statusWrites struct {
	mu   sync.Mutex
	last map[types.NamespacedName]time.Time
}

func newStatusWrites() *statusWrites {
	return &statusWrites{last: map[types.NamespacedName]time.Time{}}
}

// wait is how long an observation-only write of key must still wait.
func (w *statusWrites) wait(key types.NamespacedName, now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.last[key]
	if !ok {
		return 0
	}
	return max(0, observedInterval-now.Sub(last))
}

func (w *statusWrites) wrote(key types.NamespacedName, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last[key] = now
}

func (w *statusWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}
