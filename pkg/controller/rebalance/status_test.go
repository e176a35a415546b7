package rebalance

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

func TestDecisive(t *testing.T) {
	base := appsv1alpha1.RebalanceStatus{
		Phase: appsv1alpha1.PhaseProgressing, Step: 2, StepPhase: appsv1alpha1.StepScalingUp,
		Conditions: []metav1.Condition{{Type: appsv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: reasonStepping, Message: "member2 has 7 of 9"}},
	}
	with := func(mutate func(*appsv1alpha1.RebalanceStatus)) *appsv1alpha1.RebalanceStatus {
		s := base.DeepCopy()
		mutate(s)
		return s
	}
	secondHalf := func(s *appsv1alpha1.RebalanceStatus) {
		s.StepPhase, s.StepStartTime = appsv1alpha1.StepScalingDown, &metav1.Time{}
	}
	cases := map[string]struct {
		cur     *appsv1alpha1.RebalanceStatus
		pending *bindingWrite
		want    bool
	}{
		"fresher counts": {cur: with(func(s *appsv1alpha1.RebalanceStatus) {
			s.Clusters = []appsv1alpha1.ClusterProgress{{Name: "member2", Ready: 8}}
			s.Conditions[0].Message = "member2 has 8 of 9"
		})},
		"a new step":                          {cur: with(func(s *appsv1alpha1.RebalanceStatus) { s.Step = 3 }), want: true},
		"a new reason":                        {cur: with(func(s *appsv1alpha1.RebalanceStatus) { s.Conditions[0].Reason = reasonQueued }), want: true},
		"a phase":                             {cur: with(func(s *appsv1alpha1.RebalanceStatus) { s.Phase = appsv1alpha1.PhasePaused }), want: true},
		"second half, no record":              {cur: with(secondHalf), want: true},
		"second half recorded in the binding": {cur: with(secondHalf), pending: &bindingWrite{half: "2/ScalingDown"}},
		"second half, stale record":           {cur: with(secondHalf), pending: &bindingWrite{half: "1/ScalingDown"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := decisive(&base, tc.cur, tc.pending); got != tc.want {
				t.Errorf("decisive = %v, want %v", got, tc.want)
			}
		})
	}
}
