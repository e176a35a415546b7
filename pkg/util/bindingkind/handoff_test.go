package bindingkind

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestHandoff(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	scheduledAt := metav1.NewTime(start)
	part := Scheduled{Generation: 2, AffinityName: "primary", LastScheduledTime: &scheduledAt, Since: start,
		Condition: metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess, ObservedGeneration: 2, LastTransitionTime: scheduledAt}}
	h := NewHandoff(time.Second, time.Second)
	h.Put("uid", part)

	var status workv1alpha2.ResourceBindingStatus
	if h.Apply("uid", 1, &status) {
		t.Fatal("a part of generation 2 applied to generation 1")
	}
	if !h.Apply("uid", 2, &status) {
		t.Fatal("the pending part was not applied")
	}
	if status.SchedulerObservedGeneration != 2 || status.SchedulerObservedAffinityName != "primary" || status.LastScheduledTime == nil ||
		!meta.IsStatusConditionTrue(status.Conditions, workv1alpha2.Scheduled) {
		t.Fatalf("applied status = %+v", status)
	}
	if got := ScheduledOf(&status, 2); !got.Same(part) {
		t.Fatalf("ScheduledOf = %+v, want %+v", got, part)
	}

	h.Done("uid", 1)
	if h.Len() != 1 {
		t.Fatal("Done of an older generation dropped a newer part")
	}
	h.Done("uid", 2)
	if h.Len() != 0 {
		t.Fatal("Done left the part")
	}

	// Parts of bindings deleted before the executor wrote them go.
	h.Put("gone", part)
	later := part
	later.Since = start.Add(3 * time.Second)
	h.Put("new", later)
	if _, ok := h.Pending("gone", 2); ok || h.Len() != 1 {
		t.Fatalf("an abandoned part stayed: %d pending", h.Len())
	}

	var none *Handoff
	none.Put("uid", part)
	if none.Apply("uid", 2, &status) || none.Len() != 0 {
		t.Fatal("a nil Handoff handed something over")
	}
}

// TestHandoffLeft: how long the scheduler leaves a part to the executor.
func TestHandoffLeft(t *testing.T) {
	start := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	part := Scheduled{Generation: 3, Since: start}
	seen := part
	seen.Seen = start.Add(40 * time.Second)
	h := NewHandoff(15*time.Second, 5*time.Minute)
	for _, tc := range []struct {
		name          string
		part          Scheduled
		executorWrote bool
		at            time.Duration // after start
		want          time.Duration
	}{
		{name: "queued, just handed over", part: part, want: 5 * time.Minute},
		{name: "queued past the timeout waits on", part: part, at: time.Minute, want: 4 * time.Minute},
		{name: "queued past the bound", part: part, at: 6 * time.Minute, want: -time.Minute},
		{name: "taken up: a timeout from then", part: seen, at: 45 * time.Second, want: 10 * time.Second},
		{name: "taken up a timeout ago", part: seen, at: 55 * time.Second, want: 0},
		{name: "executor wrote the generation without it", part: part, executorWrote: true, at: 10 * time.Second, want: 5 * time.Second},
		{name: "taken up after writing without it", part: seen, executorWrote: true, at: 45 * time.Second, want: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.Left(tc.part, tc.executorWrote, start.Add(tc.at)); got != tc.want {
				t.Errorf("Left = %v, want %v", got, tc.want)
			}
		})
	}
	var none *Handoff
	if got := none.Left(part, false, start); got != 0 {
		t.Errorf("a nil Handoff leaves %v", got)
	}
	if got := NewHandoff(time.Minute, time.Second).Left(part, false, start); got != time.Minute {
		t.Errorf("a queued bound below the timeout: Left = %v, want the timeout", got)
	}
}

// TestHandoffSeen: the executor taking a binding up marks only the part
// pending for that generation.
func TestHandoffSeen(t *testing.T) {
	start := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	h := NewHandoff(0, 0)
	h.Put("uid", Scheduled{Generation: 3, Since: start})
	h.Seen("uid", 2, start.Add(time.Second))
	h.Seen("other", 3, start.Add(time.Second))
	if s, _ := h.Pending("uid", 3); !s.Seen.IsZero() {
		t.Fatalf("seen at another generation or binding: %v", s.Seen)
	}
	h.Seen("uid", 3, start.Add(2*time.Second))
	if s, _ := h.Pending("uid", 3); !s.Seen.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("Seen = %v, want start+2s", s.Seen)
	}
	h.Put("uid", Scheduled{Generation: 4, Since: start.Add(3 * time.Second)})
	if s, _ := h.Pending("uid", 4); !s.Seen.IsZero() {
		t.Fatal("a new part kept the old part's Seen")
	}
	var none *Handoff
	none.Seen("uid", 3, start)
}

func TestExecutorSynced(t *testing.T) {
	applied := func(generation int64) workv1alpha2.ResourceBindingStatus {
		return workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{
			{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionFalse, ObservedGeneration: generation}}}
	}
	for _, tc := range []struct {
		name   string
		status workv1alpha2.ResourceBindingStatus
		want   bool
	}{
		{name: "written for this generation", status: applied(4), want: true},
		{name: "written for a later one", status: applied(5), want: true},
		{name: "written for an earlier one", status: applied(3)},
		{name: "never written by the executor", status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExecutorSynced(&tc.status, 4); got != tc.want {
				t.Errorf("ExecutorSynced = %v, want %v", got, tc.want)
			}
		})
	}
}
