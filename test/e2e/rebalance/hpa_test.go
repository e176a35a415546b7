package rebalance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// hpaWorkload runs Deployment app (12 replicas of 200m) with an HPA
// (2..20, 50% CPU, 15s scale-down window) under 1200m of load, at 1:1, and
// waits until both members run 6 steadily with HPA ranges 1..10.
func hpaWorkload(ctx context.Context, t *testing.T, ns, app string, mutate ...func(*autoscalingv2.HorizontalPodAutoscaler)) *policyv1alpha1.PropagationPolicy {
	t.Helper()
	waitMembersHealthy(ctx, t)
	c := world.Client(t)
	framework.CreateNamespace(t, c, ns)
	hpa := framework.HPA(app, ns, 20)
	hpa.Spec.MinReplicas = ptr.To[int32](2)
	// A short scale-down window keeps the test short; the move reads it from
	// the member HPAs.
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](15)},
	}
	for _, m := range mutate {
		m(hpa)
	}
	pp := utiltesting.MakePropagationPolicy(app, ns).Placement(weighted(1, 1)).
		Select("apps/v1", "Deployment", app).Select("autoscaling/v2", "HorizontalPodAutoscaler", app).Obj()
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(12).Request(corev1.ResourceCPU, "200m").Obj(), hpa, pp)
	world.Load(t, app, "1200m")
	t.Cleanup(func() { world.Load(t, app, "0") })
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 6, "member2": 6}, 3*time.Minute)
	waitHPABounds(t, ns, app, map[string][2]int32{"member1": {1, 10}, "member2": {1, 10}})
	// Steady: the HPAs agree with what runs.
	framework.Consistently(t, 20*time.Second, "6:6 under constant load", func() (bool, string) {
		ok := true
		var got string
		for _, m := range members {
			d, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok = ok && *d.Spec.Replicas == 6
			got += fmt.Sprintf("%s=%d ", m, *d.Spec.Replicas)
		}
		return ok, got
	})
	return pp
}

// TestUncappedSourceHitsDeadline: with capSources false the move waits for
// the source HPA to shrink by itself. This one never does (its scale-down
// policy is Disabled, as a source whose traffic does not follow pods never
// would; under per-pod load the HPA's rounding often stops it a replica or
// two above the plan too), so the step makes no progress; at its deadline
// (never shorter than the 15s window plus a 15s sync) the move pauses,
// saying which cluster did not converge. Capacity never dipped and nothing
// moved backwards. The move is then aborted.
func TestUncappedSourceHitsDeadline(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	// Its own app name: the world offers load per app across namespaces.
	ns, app, name := "uncapped", "cart", "cart-move"
	pp := hpaWorkload(ctx, t, ns, app, func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.Behavior.ScaleDown.SelectPolicy = ptr.To(autoscalingv2.DisabledPolicySelect)
	})
	rb := slowMove(ns, name, app, 0)
	rb.Spec.MaxSurge = nil
	rb.Spec.CapSources = ptr.To(false)
	rb.Spec.ProgressDeadlineSeconds = ptr.To[int32](10)
	framework.Create(t, world.Client(t), rb)
	s := startSampler(ctx, t, ns, app)
	t.Cleanup(func() {
		if t.Failed() {
			// This test failed twice in clean-clone runs of the whole
			// package (member1 ended at the plan although its HPA cannot
			// scale down) and never alone: what the members ran, per
			// second, is the first thing to look at.
			s.end()
			logSamples(t, s.all())
		}
	})
	setWeights(t, pp, 1, 3)
	paused := waitPhase(ctx, t, ns, name, appsv1alpha1.PhasePaused, 4*time.Minute)
	s.finish(t, 12, map[string]bool{"member2": true})
	cond := condition(paused, appsv1alpha1.ConditionProgressing)
	if cond == nil || cond.Reason != "ProgressDeadlineExceeded" || !strings.Contains(cond.Message, "member1") ||
		!strings.Contains(cond.Message, "did not scale down") {
		t.Errorf("paused with %v, want ProgressDeadlineExceeded naming member1 and why", cond)
	}
	if !paused.Spec.Paused {
		t.Error("the deadline did not set spec.paused (resume would not be the user's usual action)")
	}
	t.Logf("%s", describeRebalance(paused))
	// A paused step keeps its surge counted against the fleet-wide budget;
	// the abort lets go of it (and of nothing else).
	world.Atoll(t, "rebalance", "abort", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	waitPhase(ctx, t, ns, name, appsv1alpha1.PhaseAborted, time.Minute)
}

// TestMoveWithHPA: a Deployment whose member HPAs own its replicas (200m
// requests, 50% CPU target, 1200m of constant load: 12 pods of demand) moves
// from 1:1 to 1:3. Each member HPA first gets its weight's share of the
// template's range (2..20 over 6:6 is 1..10 each). Sampled every second,
// Ready pods never total less than the 12 the load needs, member2 only
// grows and member1 only shrinks (no ping-pong), atoll never writes
// spec.replicas itself (the member HPAs do, steered by floors and caps),
// the Rebalance ends Completed, and the members end at 3:9 (±1) with their
// HPAs' ranges split 1:3 again.
func TestMoveWithHPA(t *testing.T) {
	ctx := framework.Context(t, 10*time.Minute)
	ns, app := "autoscaled", "shop"
	pp := hpaWorkload(ctx, t, ns, app)

	s := startSampler(ctx, t, ns, app)
	setWeights(t, pp, 1, 3)
	name := names.BindingName("Deployment", app)
	waitCompleted(ctx, t, ns, name, "3:9", 6*time.Minute)
	time.Sleep(20 * time.Second) // the released HPAs must stay where the move left them
	rb := waitCompleted(ctx, t, ns, name, "3:9", time.Second)
	samples := s.finish(t, 12, map[string]bool{"member2": true})
	t.Logf("rebalance: %s", describeRebalance(rb))
	end := samples[len(samples)-1]
	if d1, d2 := end.replicas["member1"]-3, end.replicas["member2"]-9; d1 < -1 || d1 > 1 || d2 < -1 || d2 > 1 {
		t.Errorf("ended at %s, want 3:9 ±1", end)
	}
	if !rb.Status.HPA {
		t.Errorf("the move did not steer the member HPAs: %s", describeRebalance(rb))
	}
	for _, cp := range rb.Status.Clusters {
		if cp.Name == "member1" && (cp.ScaleDownWindowSeconds == nil || *cp.ScaleDownWindowSeconds != 15) {
			t.Errorf("member1's scale-down window read as %v, want 15 (from the member HPA)", cp.ScaleDownWindowSeconds)
		}
	}
	// Floors and caps lifted: the template's 2..20 split by the new 3:9.
	waitHPABounds(t, ns, app, map[string][2]int32{"member1": {1, 5}, "member2": {1, 15}})
	// No fight: each member HPA wants what its Deployment runs.
	framework.Eventually(t, time.Minute, "member HPAs agree with their Deployments", func() (bool, string) {
		ok, got := true, ""
		for _, m := range members {
			cs := world.MemberClientset(t, m)
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok = ok && h.Status.DesiredReplicas == *d.Spec.Replicas
			got += fmt.Sprintf("%s: spec %d, HPA desired %d; ", m, *d.Spec.Replicas, h.Status.DesiredReplicas)
		}
		return ok, got
	})
}

// waitHPABounds waits until each member HPA has the given min and max.
func waitHPABounds(t *testing.T, ns, name string, want map[string][2]int32) {
	t.Helper()
	framework.Eventually(t, time.Minute, fmt.Sprintf("member HPA bounds %v", want), func() (bool, string) {
		ok := true
		got := ""
		for m, w := range want {
			h, err := world.MemberClientset(t, m).AutoscalingV2().HorizontalPodAutoscalers(ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok = ok && h.Spec.MinReplicas != nil && *h.Spec.MinReplicas == w[0] && h.Spec.MaxReplicas == w[1]
			got += fmt.Sprintf("%s %d..%d ", m, ptr.Deref(h.Spec.MinReplicas, 1), h.Spec.MaxReplicas)
		}
		return ok, got
	})
}
