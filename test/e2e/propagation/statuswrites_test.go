package propagation

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestOneStatusWritePerPlacement: a new placement's Scheduled condition is
// written together with the executor's applied status (the scheduler hands
// its part over), so the binding's first status already says where the
// workload is and that it was applied there — one binding status write
// for a new template, not two. And the binding, once placed, keeps no
// field-ownership record (managedFields): the scheduler's placement patch
// cleared it, and the status writes did not start it again (design 0013,
// decision 45).
func TestOneStatusWritePerPlacement(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "status-writes"
	framework.CreateNamespace(t, c, ns)
	wc, err := client.NewWithWatch(world.RESTConfig(t), client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &workv1alpha2.ResourceBindingList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	framework.Create(t, c,
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames(members...).Select("apps/v1", "Deployment", "web").Obj(),
		utiltesting.MakeDeployment("web", ns).Replicas(3).Obj(),
	)
	name := names.BindingName("Deployment", "web")
	var statuses []string // each distinct status the binding showed
	var last string
	for {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-ctx.Done():
			t.Fatalf("binding %s not fully applied; statuses seen:\n%v", name, statuses)
		}
		rb, ok := ev.Object.(*workv1alpha2.ResourceBinding)
		if !ok || rb.Name != name {
			continue
		}
		s := statusString(&rb.Status)
		if s != last && s != "" {
			statuses = append(statuses, s)
			last = s
		}
		if meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied) {
			if len(rb.ManagedFields) != 0 {
				t.Errorf("placed binding %s records field ownership: %v", name, framework.Managers(rb.ManagedFields))
			}
			break
		}
	}
	first := statuses[0]
	want := fmt.Sprintf("scheduled=True applied=%d/%d fully=True", len(members), len(members))
	if first != want {
		t.Fatalf("the binding's first status is %q, want %q (all statuses: %q)", first, want, statuses)
	}
}

// statusString sums up what a binding status says about placement.
func statusString(s *workv1alpha2.ResourceBindingStatus) string {
	if len(s.Conditions) == 0 && len(s.AggregatedStatus) == 0 {
		return ""
	}
	applied := 0
	for _, item := range s.AggregatedStatus {
		if item.Applied {
			applied++
		}
	}
	cond := func(t string) string {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			return string(c.Status)
		}
		return "none"
	}
	return fmt.Sprintf("scheduled=%s applied=%d/%d fully=%s", cond(workv1alpha2.Scheduled), applied, len(s.AggregatedStatus), cond(workv1alpha2.FullyApplied))
}
