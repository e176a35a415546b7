package rebalance

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestBadInput: what cannot be acted on is refused at admission when the
// object alone shows it (surge, weights), and reported in the Valid
// condition, naming the field, when it takes other objects to know (a
// missing workload, an unknown cluster, a last stage that is not the
// policy's). Nothing changes in the members.
func TestBadInput(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	ns, app := "badinput", "web"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})

	refused := map[string]struct {
		mutate func(*appsv1alpha1.Rebalance)
		want   string
	}{
		"zero surge":     {func(r *appsv1alpha1.Rebalance) { r.Spec.MaxSurge = ptr.To(intstr.FromInt32(0)) }, "maxSurge"},
		"negative surge": {func(r *appsv1alpha1.Rebalance) { r.Spec.MaxSurge = ptr.To(intstr.FromInt32(-2)) }, "maxSurge"},
		"0% surge":       {func(r *appsv1alpha1.Rebalance) { r.Spec.MaxSurge = ptr.To(intstr.FromString("0%")) }, "maxSurge"},
		"negative weight": {func(r *appsv1alpha1.Rebalance) {
			r.Spec.Stages = []appsv1alpha1.Stage{{Weights: map[string]int64{"member1": -1, "member2": 2}}}
		}, "weights must not be negative"},
		"no workload name":   {func(r *appsv1alpha1.Rebalance) { r.Spec.Workload.Name = "" }, "spec.workload.name"},
		"abort and rollback": {func(r *appsv1alpha1.Rebalance) { r.Spec.Abort, r.Spec.Rollback = true, true }, "abort and rollback"},
	}
	for name, tc := range refused {
		rb := slowMove(ns, "refused", app, 0)
		tc.mutate(rb)
		err := c.Create(ctx, rb)
		if err == nil {
			_ = c.Delete(ctx, rb)
			t.Errorf("%s: created, want it refused", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not name %q", name, err, tc.want)
		}
	}

	reported := map[string]struct {
		rb   *appsv1alpha1.Rebalance
		want string
	}{
		"missing workload": {slowMove(ns, "ghost", "nope", 0), "spec.workload: Deployment badinput/nope has no ResourceBinding"},
		"unknown cluster": {withStages(slowMove(ns, "unknown-cluster", app, 0),
			map[string]int64{"member1": 1, "nope": 2}, map[string]int64{"member1": 1, "member2": 2}), `spec.stages[0].weights: cluster "nope" does not exist`},
	}
	for _, tc := range reported {
		framework.Create(t, c, tc.rb)
		waitValid(t, tc.rb, tc.want)
		if err := c.Delete(ctx, tc.rb); err != nil {
			t.Fatal(err)
		}
	}

	// A last stage that is not the policy's: the policy moves to 1:2, the
	// Rebalance ends at 1:1. The members keep 6:6.
	wrong := withStages(slowMove(ns, "wrong-stage", app, 0), map[string]int64{"member1": 1, "member2": 1})
	framework.Create(t, c, wrong)
	setWeights(t, pp, 1, 2)
	waitValid(t, wrong, "spec.stages[0].weights: the last stage must give the policy's distribution")
	framework.Consistently(t, 10*time.Second, "members unchanged", func() (bool, string) {
		for _, m := range members {
			d, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil || *d.Spec.Replicas != 6 {
				return false, m + " changed"
			}
		}
		return true, ""
	})
}

func withStages(rb *appsv1alpha1.Rebalance, weights ...map[string]int64) *appsv1alpha1.Rebalance {
	for _, w := range weights {
		rb.Spec.Stages = append(rb.Spec.Stages, appsv1alpha1.Stage{Weights: w})
	}
	return rb
}

// waitValid waits for Valid=False with a message containing want.
func waitValid(t *testing.T, rb *appsv1alpha1.Rebalance, want string) {
	t.Helper()
	c := world.Client(t)
	framework.Eventually(t, time.Minute, "Valid=False: "+want, func() (bool, string) {
		got, err := rebalanceAt(t.Context(), c, rb.Namespace, rb.Name)
		if err != nil {
			return false, err.Error()
		}
		cond := condition(got, appsv1alpha1.ConditionValid)
		return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, want), describeRebalance(got)
	})
}
