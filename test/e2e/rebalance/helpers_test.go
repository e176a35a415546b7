package rebalance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// weighted is a Divided placement over both members with static weights.
func weighted(w1, w2 int64) *policyv1alpha1.Placement {
	return utiltesting.MakePlacement().ClusterNames(members...).ClusterWeight("member1", w1).ClusterWeight("member2", w2).Obj()
}

// plainWorkload creates namespace ns, a Deployment app of replicas pods
// (100m each, no HPA) and a policy placing it at w1:w2, and waits until the
// members run that split.
func plainWorkload(ctx context.Context, t *testing.T, ns, app string, replicas int32, w1, w2 int64, want map[string]int) *policyv1alpha1.PropagationPolicy {
	t.Helper()
	waitMembersHealthy(ctx, t)
	c := world.Client(t)
	framework.CreateNamespace(t, c, ns)
	pp := utiltesting.MakePropagationPolicy(app, ns).Placement(weighted(w1, w2)).Select("apps/v1", "Deployment", app).Obj()
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(replicas).Request(corev1.ResourceCPU, "100m").Obj(), pp)
	waitRunning(ctx, t, ns, app, want, 3*time.Minute)
	return pp
}

// setWeights changes the policy's static weights.
func setWeights(t *testing.T, pp *policyv1alpha1.PropagationPolicy, w1, w2 int64) {
	t.Helper()
	framework.Update(t, world.Client(t), pp, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Placement.ReplicaScheduling = weighted(w1, w2).ReplicaScheduling
	})
}

// waitRunning waits until each member's Deployment asks for want[m]
// replicas and has that many Ready pods.
func waitRunning(ctx context.Context, t *testing.T, ns, app string, want map[string]int, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("members run %v of %s/%s", want, ns, app), func() (bool, string) {
		ok := true
		var got []string
		for _, m := range members {
			cs := world.MemberClientset(t, m)
			ready, err := framework.ReadyPods(ctx, cs, ns, app)
			if err != nil {
				return false, err.Error()
			}
			spec := -1
			if d, err := cs.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{}); err == nil && d.Spec.Replicas != nil {
				spec = int(*d.Spec.Replicas)
			}
			if want[m] == 0 {
				ok = ok && ready == 0 && spec <= 0
			} else {
				ok = ok && ready == want[m] && spec == want[m]
			}
			got = append(got, fmt.Sprintf("%s spec %d ready %d", m, spec, ready))
		}
		return ok, strings.Join(got, ", ")
	})
}

// rebalanceOf reads the Rebalance atoll created for a Deployment (named
// after its binding).
func rebalanceOf(ctx context.Context, c client.Client, ns, app string) (*appsv1alpha1.Rebalance, error) {
	rb := &appsv1alpha1.Rebalance{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", app)}, rb)
	return rb, err
}

// waitCompleted waits for the Rebalance ns/name to complete the move to
// the distribution to ("4:8", member1:member2) and returns it. (A
// Rebalance completed earlier, before the policy change reached it, does
// not count.)
func waitCompleted(ctx context.Context, t *testing.T, ns, name, to string, timeout time.Duration) *appsv1alpha1.Rebalance {
	t.Helper()
	c := world.Client(t)
	rb := &appsv1alpha1.Rebalance{}
	framework.Eventually(t, timeout, fmt.Sprintf("Rebalance %s/%s Completed at %s", ns, name, to), func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, err.Error()
		}
		return rb.Status.Phase == appsv1alpha1.PhaseCompleted && rb.Status.Summary.To == to, describeRebalance(rb)
	})
	return rb
}

// waitMembersHealthy waits until both members are Ready and untainted, so
// a test does not start while a member an earlier test stopped is still
// coming back (its first placement would go to the other member only).
func waitMembersHealthy(ctx context.Context, t *testing.T) {
	t.Helper()
	c := world.Client(t)
	framework.Eventually(t, 2*time.Minute, "members Ready without taints", func() (bool, string) {
		for _, m := range members {
			cl, err := framework.GetCluster(ctx, c, m)
			if err != nil {
				return false, err.Error()
			}
			if framework.ClusterReadyStatus(cl) != metav1.ConditionTrue || len(cl.Spec.Taints) > 0 {
				return false, fmt.Sprintf("%s: Ready %s, taints %v", m, framework.ClusterReadyStatus(cl), cl.Spec.Taints)
			}
		}
		return true, ""
	})
}

// waitPhase waits for the Rebalance ns/name to reach phase and returns it.
func waitPhase(ctx context.Context, t *testing.T, ns, name string, phase appsv1alpha1.RebalancePhase, timeout time.Duration) *appsv1alpha1.Rebalance {
	t.Helper()
	c := world.Client(t)
	rb := &appsv1alpha1.Rebalance{}
	framework.Eventually(t, timeout, fmt.Sprintf("Rebalance %s/%s %s", ns, name, phase), func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, err.Error()
		}
		return rb.Status.Phase == phase, describeRebalance(rb)
	})
	return rb
}

func describeRebalance(rb *appsv1alpha1.Rebalance) string {
	var conds []string
	for _, c := range rb.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("phase %s step %s %s progress %s from %s to %s; %s", rb.Status.Phase, rb.Status.Summary.Step,
		rb.Status.StepPhase, rb.Status.Summary.Progress, rb.Status.Summary.From, rb.Status.Summary.To, strings.Join(conds, "; "))
}

// condition returns a Rebalance condition (nil when absent).
func condition(rb *appsv1alpha1.Rebalance, t string) *metav1.Condition {
	return meta.FindStatusCondition(rb.Status.Conditions, t)
}
