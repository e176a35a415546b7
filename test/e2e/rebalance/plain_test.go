package rebalance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"

	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestMoveWithoutHPA: 12 replicas of a Deployment without an HPA move from
// 1:1 to 1:2 when the policy's weights change. Sampled every second, the
// Ready pods never total less than 12, member2 only grows and member1 only
// shrinks, and member2 has grown before member1 loses a pod. atoll creates
// the Rebalance, which ends Completed at 4/8, and `atoll rebalance list`
// shows it.
func TestMoveWithoutHPA(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	ns, app := "plain", "web"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})

	s := startSampler(ctx, t, ns, app)
	setWeights(t, pp, 1, 2)
	name := names.BindingName("Deployment", app)
	rb := waitCompleted(ctx, t, ns, name, "4:8", 4*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 4, "member2": 8}, time.Minute)
	samples := s.finish(t, 12, map[string]bool{"member2": true})
	for _, smp := range samples {
		if smp.replicas["member1"] < 6 {
			if smp.ready["member2"] <= 6 {
				t.Errorf("member1 shrank before member2 had new Ready pods: %s", smp)
			}
			break
		}
	}
	if got := rb.Status.Summary; got.From != "6:6" || got.To != "4:8" || got.Progress != "100%" {
		t.Errorf("summary %+v, want from 6:6 to 4:8 at 100%%", got)
	}
	if rb.Status.Step < 1 || len(rb.Status.History) == 0 {
		t.Errorf("no steps recorded: %s", describeRebalance(rb))
	}
	out := world.Atoll(t, "rebalance", "list", "-A", "--kubeconfig", world.Kubeconfig)
	if !strings.Contains(out, name) || !strings.Contains(out, "Completed") || !strings.Contains(out, "Deployment/web") {
		t.Errorf("atoll rebalance list -A:\n%s", out)
	}
	out = world.Atoll(t, "rebalance", "status", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	for _, want := range []string{"Phase:      Completed", "member1", "member2", "Recent steps:"} {
		if !strings.Contains(out, want) {
			t.Errorf("atoll rebalance status lacks %q:\n%s", want, out)
		}
	}
	t.Logf("atoll rebalance status:\n%s", out)
}

// TestEditsMakeOnePlan: the policy's weights (1:1 → 1:2) and the
// template's replicas (12 → 15) change within milliseconds, as GitOps
// applies them. The move plans once, for both: every step heads to 5:10,
// none to the 4:8 of the weights alone.
func TestEditsMakeOnePlan(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	ns, app := "oneplan", "web"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})
	s := startSampler(ctx, t, ns, app)
	setWeights(t, pp, 1, 2)
	framework.Update(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app}}, func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr.To[int32](15)
	})
	rb := waitCompleted(ctx, t, ns, names.BindingName("Deployment", app), "5:10", 3*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 5, "member2": 10}, time.Minute)
	s.finish(t, 12, map[string]bool{"member2": true})
	for _, h := range rb.Status.History {
		for _, p := range h.Planned {
			if (p.Name == "member1" && p.Replicas < 5) || (p.Name == "member2" && p.Replicas > 10) {
				t.Errorf("step %d planned %v, beyond 5:10: the two edits made two plans", h.Step, h.Planned)
			}
		}
	}
}

// TestFleetBudgetQueues: three workloads move at once under a fleet-wide
// budget of 4 replicas in flight (--rebalance-max-in-flight=4); each step
// adds 2, so one move waits, shown as Queued, and all three complete.
func TestFleetBudgetQueues(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	waitMembersHealthy(ctx, t)
	c := world.Client(t)
	ns := "budget"
	framework.CreateNamespace(t, c, ns)
	apps := []string{"a", "b", "c"}
	pp := utiltesting.MakePropagationPolicy("fleet", ns).Placement(weighted(1, 1)).Select("apps/v1", "Deployment", "").Obj()
	framework.Create(t, c, pp)
	for _, app := range apps {
		framework.Create(t, c, framework.Deployment(app, ns).Replicas(12).Request(corev1.ResourceCPU, "100m").Obj())
	}
	for _, app := range apps {
		waitRunning(ctx, t, ns, app, map[string]int{"member1": 6, "member2": 6}, 3*time.Minute)
	}
	setWeights(t, pp, 1, 2)
	queued := ""
	framework.Eventually(t, 3*time.Minute, "all three moves Completed", func() (bool, string) {
		var list appsv1alpha1.RebalanceList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		done := 0
		for i := range list.Items {
			rb := &list.Items[i]
			if cond := condition(rb, appsv1alpha1.ConditionProgressing); cond != nil && cond.Reason == "Queued" && queued == "" {
				queued = rb.Name + ": " + cond.Message
			}
			if rb.Status.Phase == appsv1alpha1.PhaseCompleted && rb.Status.Summary.To == "4:8" {
				done++
			}
		}
		return done == len(apps), fmt.Sprintf("%d of %d completed", done, len(apps))
	})
	if queued == "" {
		t.Error("no move waited for the budget: 3 moves of 2 replicas each ran under a budget of 4")
	} else {
		t.Logf("queued: %s", queued)
	}
	for _, app := range apps {
		waitRunning(ctx, t, ns, app, map[string]int{"member1": 4, "member2": 8}, time.Minute)
	}
}
