package rebalance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/test/framework"
)

// slowMove is a Rebalance of Deployment app moving one replica per step,
// at most one step every interval, so tests can act mid-way.
func slowMove(ns, name, app string, interval time.Duration) *appsv1alpha1.Rebalance {
	return &appsv1alpha1.Rebalance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.RebalanceSpec{
			Workload:        appsv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: app},
			MaxSurge:        ptr.To(intstr.FromInt32(1)),
			MinStepInterval: &metav1.Duration{Duration: interval},
		},
	}
}

// midMove runs 12 replicas at 1:1 in namespace ns, creates a Rebalance
// web-move moving one replica per step at most every interval, changes the
// policy to 1:5 (2:10) and returns, sampling, once step has started.
func midMove(ctx context.Context, t *testing.T, ns string, interval time.Duration, step int32) *sampler {
	t.Helper()
	pp := plainWorkload(ctx, t, ns, "web", 12, 1, 1, map[string]int{"member1": 6, "member2": 6})
	framework.Create(t, world.Client(t), slowMove(ns, "web-move", "web", interval))
	s := startSampler(ctx, t, ns, "web")
	setWeights(t, pp, 1, 5)
	waitStep(ctx, t, ns, "web-move", step)
	return s
}

// waitStep waits until the Rebalance has started step n.
func waitStep(ctx context.Context, t *testing.T, ns, name string, n int32) {
	t.Helper()
	c := world.Client(t)
	framework.Eventually(t, 3*time.Minute, fmt.Sprintf("Rebalance %s/%s at step %d", ns, name, n), func() (bool, string) {
		rb := &appsv1alpha1.Rebalance{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, err.Error()
		}
		return rb.Status.Step >= n, describeRebalance(rb)
	})
}

// TestStagesWithPause: a Rebalance created before the policy changes sets
// two stages, the first with a pause. The move stops at the first stage
// (2:3 of 12 is 5:7), holds there, and goes on to the policy's 1:2 (4:8)
// on `atoll rebalance resume`. atoll uses the user's Rebalance and creates
// none of its own.
func TestStagesWithPause(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	c := world.Client(t)
	ns, app, name := "staged", "web", "web-move"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})
	rb := slowMove(ns, name, app, 0)
	rb.Spec.Stages = []appsv1alpha1.Stage{
		{Weights: map[string]int64{"member1": 2, "member2": 3}, Pause: true},
		{Weights: map[string]int64{"member1": 1, "member2": 2}},
	}
	framework.Create(t, c, rb)
	waitPhase(ctx, t, ns, name, appsv1alpha1.PhasePending, time.Minute)

	s := startSampler(ctx, t, ns, app)
	setWeights(t, pp, 1, 2)
	paused := waitPhase(ctx, t, ns, name, appsv1alpha1.PhasePaused, 3*time.Minute)
	if cond := condition(paused, appsv1alpha1.ConditionProgressing); cond == nil || cond.Reason != "StageReached" {
		t.Errorf("paused for %v, want StageReached", cond)
	}
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 5, "member2": 7}, time.Minute)
	framework.Consistently(t, 10*time.Second, "held at the first stage", func() (bool, string) {
		got, err := rebalanceAt(ctx, c, ns, name)
		return err == nil && got.Status.Phase == appsv1alpha1.PhasePaused && got.Status.Summary.To == "4:8", describeRebalance(got)
	})

	out := world.Atoll(t, "rebalance", "resume", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	if !strings.Contains(out, "resumed") {
		t.Errorf("atoll rebalance resume: %s", out)
	}
	waitCompleted(ctx, t, ns, name, "4:8", 3*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 4, "member2": 8}, time.Minute)
	s.finish(t, 12, map[string]bool{"member2": true})
	if _, err := rebalanceOf(ctx, c, ns, app); err == nil {
		t.Errorf("atoll created a Rebalance of its own beside the user's %s", name)
	}
}

func rebalanceAt(ctx context.Context, c client.Client, ns, name string) (*appsv1alpha1.Rebalance, error) {
	rb := &appsv1alpha1.Rebalance{}
	return rb, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb)
}

// TestAbortKeepsEveryPod: a move of one replica per step from 6:6 toward
// 2:10 is aborted after its second step has started. The Rebalance ends
// Aborted with PolicyDiffers, and for 30s no member's replica count or
// Ready pods change: the abort deletes nothing.
func TestAbortKeepsEveryPod(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	ns, name := "aborted", "web-move"
	s := midMove(ctx, t, ns, 4*time.Second, 2)

	out := world.Atoll(t, "rebalance", "abort", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	if !strings.Contains(out, "aborted") {
		t.Errorf("atoll rebalance abort: %s", out)
	}
	rb := waitPhase(ctx, t, ns, name, appsv1alpha1.PhaseAborted, time.Minute)
	if cond := condition(rb, appsv1alpha1.ConditionPolicyDiffers); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("PolicyDiffers %v, want True: %s", cond, describeRebalance(rb))
	}
	time.Sleep(3 * time.Second) // the step's own in-flight half settles
	var frozen sample
	framework.Eventually(t, 30*time.Second, "a settled sample", func() (bool, string) {
		all := s.all()
		frozen = all[len(all)-1]
		return frozen.totalReady() >= 12, frozen.String()
	})
	framework.Consistently(t, 30*time.Second, "nothing changes after the abort", func() (bool, string) {
		all := s.all()
		now := all[len(all)-1]
		for _, m := range members {
			if now.replicas[m] != frozen.replicas[m] || now.ready[m] != frozen.ready[m] {
				return false, fmt.Sprintf("was %s, now %s", frozen, now)
			}
		}
		return true, now.String()
	})
	s.finish(t, 12, map[string]bool{"member2": true})
	if frozen.replicas["member2"] <= 6 || frozen.replicas["member2"] >= 10 {
		t.Errorf("aborted at %s, want mid-way between 6:6 and 2:10", frozen)
	}
}

// TestRollback: a move toward 2:10 is rolled back after its second step
// has started; it returns to 6:6 with the same stepping, never below 12
// Ready pods, each member moving one way before the rollback and the other
// way after it, and ends RolledBack.
func TestRollback(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	ns, app, name := "rolledback", "web", "web-move"
	s := midMove(ctx, t, ns, 2*time.Second, 2)

	turned := time.Now()
	world.Atoll(t, "rebalance", "rollback", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	rb := waitPhase(ctx, t, ns, name, appsv1alpha1.PhaseRolledBack, 3*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 6, "member2": 6}, time.Minute)
	s.end()
	samples := s.all()
	logSamples(t, samples)
	checkFloor(t, samples, 12)
	var before, after []sample
	for _, smp := range samples {
		if smp.at.Before(turned) {
			before = append(before, smp)
		} else {
			after = append(after, smp)
		}
	}
	checkMonotonic(t, before, map[string]bool{"member2": true})
	checkMonotonic(t, after, map[string]bool{"member1": true})
	if cond := condition(rb, appsv1alpha1.ConditionPolicyDiffers); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("PolicyDiffers %v, want True (the policy still says 1:5): %s", cond, describeRebalance(rb))
	}
}

// TestImmediateOptOut: a policy annotated apps.atoll.dev/rebalance:
// Immediate keeps Karmada's behaviour: a weight change re-divides at once
// and no Rebalance is created.
func TestImmediateOptOut(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	ns, app := "immediate", "web"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})
	framework.Update(t, c, pp, func(p *policyv1alpha1.PropagationPolicy) {
		p.Annotations = map[string]string{"apps.atoll.dev/rebalance": "Immediate"}
		p.Spec.Placement = *weighted(1, 2)
	})
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 4, "member2": 8}, 2*time.Minute)
	if rb, err := rebalanceOf(ctx, c, ns, app); err == nil {
		t.Errorf("a Rebalance was created for an Immediate policy: %s", describeRebalance(rb))
	}
	rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rb.Annotations["apps.atoll.dev/rebalance-target"]; ok {
		t.Errorf("binding carries a rebalance target: %v", rb.Annotations)
	}
}
