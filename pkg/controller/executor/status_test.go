package executor

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestUrgentChange(t *testing.T) {
	base := func() *workv1alpha2.ResourceBindingStatus {
		st := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}},
			{ClusterName: "member2", Applied: true, Health: workv1alpha2.ResourceHealthy},
		}}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, Reason: "FullyAppliedSuccess"})
		return st
	}
	for name, tc := range map[string]struct {
		change func(*workv1alpha2.ResourceBindingStatus)
		want   bool
	}{
		"member counters only": {func(s *workv1alpha2.ResourceBindingStatus) {
			s.AggregatedStatus[0].Status = &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}
		}, false},
		"a cluster more": {func(s *workv1alpha2.ResourceBindingStatus) {
			s.AggregatedStatus = append(s.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: "member3"})
		}, true},
		"health": {func(s *workv1alpha2.ResourceBindingStatus) {
			s.AggregatedStatus[1].Health = workv1alpha2.ResourceUnhealthy
		}, true},
		"applied": {func(s *workv1alpha2.ResourceBindingStatus) { s.AggregatedStatus[0].Applied = false }, true},
		"fully applied": {func(s *workv1alpha2.ResourceBindingStatus) {
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionFalse, Reason: "FullyAppliedFailed"})
		}, true},
	} {
		t.Run(name, func(t *testing.T) {
			updated := base()
			tc.change(updated)
			if got := urgentChange(base(), updated); got != tc.want {
				t.Errorf("urgentChange = %v, want %v", got, tc.want)
			}
		})
	}
}
