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
	h := NewHandoff(time.Second)
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
