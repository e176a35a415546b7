package scheduler

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// TestStartupListGoesLast: after a restart the start-up list enqueues
// every binding; one created or changed meanwhile is scheduled before
// them whatever its schedulePriority, and the start-up ones keep their
// schedulePriority order among themselves.
func TestStartupListGoesLast(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("scheduler-startup-test")
	defer q.ShutDown()
	h := byPriority(bindingkind.ResourceBinding{})
	binding := func(name string, priority int32) *workv1alpha2.ResourceBinding {
		b := utiltesting.MakeBinding(name, "ns").Obj()
		b.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: priority}
		return b
	}
	ctx := context.Background()
	h.Create(ctx, event.CreateEvent{Object: binding("old-low", 0), IsInInitialList: true}, q)
	h.Create(ctx, event.CreateEvent{Object: binding("old-high", 1000), IsInInitialList: true}, q)
	h.Create(ctx, event.CreateEvent{Object: binding("new-negative", -5)}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: binding("changed", 0), ObjectNew: binding("changed", 0)}, q)
	h.Create(ctx, event.CreateEvent{Object: binding("new-high", 10)}, q)

	var got []string
	for range 5 {
		req, _, _ := q.GetWithPriority()
		got = append(got, req.Name)
		q.Done(req)
	}
	want := []string{"new-high", "changed", "new-negative", "old-high", "old-low"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scheduling order (-want +got):\n%s", diff)
	}
}
