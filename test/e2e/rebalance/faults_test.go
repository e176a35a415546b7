package rebalance

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestControlPlaneRestartMidMove: the control plane is killed while a move
// of one replica per step from 6:6 to 2:10 is under way and started again
// 10s later. The members keep running what they had; the move resumes at
// the step it was at and completes, with no dip below 12 Ready pods, no
// reversal and exactly the four steps the plan has (no step done twice).
func TestControlPlaneRestartMidMove(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	ns, app, name := "restart", "web", "web-move"
	s := midMove(ctx, t, ns, 3*time.Second, 2)

	undo := world.InjectFault(t, "control-plane", "stop", "start --wait 2m")
	time.Sleep(10 * time.Second)
	undo()

	rb := waitCompleted(ctx, t, ns, name, "2:10", 4*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 2, "member2": 10}, time.Minute)
	s.finish(t, 12, map[string]bool{"member2": true})
	if rb.Status.Step != 4 {
		t.Errorf("the move took %d steps, want 4 (6:6 to 2:10, one replica a step): %s", rb.Status.Step, describeRebalance(rb))
	}
}

// TestClusterNotReadyPausesStep: a member stopped during a move makes the
// Rebalance pause (ClusterNotReady) without touching the other member;
// once the member is back the move completes. (The policy tolerates the
// failed member's NoExecute taints for 5 minutes, so failover stays out.)
func TestClusterNotReadyPausesStep(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	c := world.Client(t)
	ns, app, name := "notready", "web", "web-move"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})
	framework.Update(t, c, pp, func(p *policyv1alpha1.PropagationPolicy) {
		for _, key := range []string{clusterv1alpha1.TaintClusterNotReady, clusterv1alpha1.TaintClusterUnreachable} {
			p.Spec.Placement.ClusterTolerations = append(p.Spec.Placement.ClusterTolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)})
		}
	})
	framework.Create(t, c, slowMove(ns, name, app, 3*time.Second))
	setWeights(t, pp, 1, 5)
	waitStep(ctx, t, ns, name, 1)

	undo := world.InjectFault(t, "member1", "stop", "start --wait 2m")
	rb := waitPhase(ctx, t, ns, name, appsv1alpha1.PhasePaused, 2*time.Minute)
	if cond := condition(rb, appsv1alpha1.ConditionProgressing); cond == nil || cond.Reason != "ClusterNotReady" {
		t.Errorf("paused for %v, want ClusterNotReady", cond)
	}
	paused := rb.Status.Step
	framework.Consistently(t, 10*time.Second, "no step while member1 is down", func() (bool, string) {
		got, err := rebalanceAt(ctx, c, ns, name)
		return err == nil && got.Status.Step == paused, describeRebalance(got)
	})
	undo()
	waitCompleted(ctx, t, ns, name, "2:10", 4*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 2, "member2": 10}, time.Minute)
}

// TestFailoverWins: a member fails during a move and the policy does not
// tolerate it: failover evicts the workload from it and the scheduler
// places all 12 replicas on member2 at once. The Rebalance ends Failed
// (Superseded) and does not fight the failover.
func TestFailoverWins(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	ns, app, name := "failover", "web", "web-move"
	midMove(ctx, t, ns, 3*time.Second, 1).end()

	world.InjectFault(t, "member1", "stop", "start --wait 2m")
	rb := waitPhase(ctx, t, ns, name, appsv1alpha1.PhaseFailed, 3*time.Minute)
	if cond := condition(rb, appsv1alpha1.ConditionProgressing); cond == nil || cond.Reason != "Superseded" {
		t.Errorf("failed for %v, want Superseded", cond)
	}
	framework.Eventually(t, 2*time.Minute, "all 12 replicas Ready in member2", func() (bool, string) {
		ready, err := framework.ReadyPods(ctx, world.MemberClientset(t, "member2"), ns, app)
		return err == nil && ready == 12, fmt.Sprintf("ready %d, err %v", ready, err)
	})
}
