package replicassyncer

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/rebalance"
)

// binding is a settled Divided Deployment binding over member1 and member2
// whose members run 3 replicas each.
func binding() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment", Generation: 2},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
			Replicas: 4,
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 2}},
		},
		Status: workv1alpha2.ResourceBindingStatus{
			SchedulerObservedGeneration: 2,
			AggregatedStatus:            []workv1alpha2.AggregatedStatusItem{item("member1", 3, 3, 1), item("member2", 3, 3, 1)},
		},
	}
}

func item(cluster string, replicas, updated int32, observed int64) workv1alpha2.AggregatedStatusItem {
	raw := fmt.Sprintf(`{"replicas":%d,"updatedReplicas":%d,"readyReplicas":%d,"observedGeneration":%d,"generation":1}`,
		replicas, updated, replicas, observed)
	return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Status: &runtime.RawExtension{Raw: []byte(raw)}}
}

func TestMembersSum(t *testing.T) {
	cases := map[string]struct {
		edit   func(rb *workv1alpha2.ResourceBinding)
		want   int32
		wantOK bool
	}{
		"settled":    {edit: func(*workv1alpha2.ResourceBinding) {}, want: 6, wantOK: true},
		"duplicated": {edit: func(rb *workv1alpha2.ResourceBinding) { rb.Spec.Placement = &policyv1alpha1.Placement{} }},
		"statefulset": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Spec.Resource.Kind = "StatefulSet"
		}},
		"scheduler behind": {edit: func(rb *workv1alpha2.ResourceBinding) { rb.Generation = 3 }},
		"deleting":         {edit: func(rb *workv1alpha2.ResourceBinding) { rb.DeletionTimestamp = &metav1.Time{} }},
		"cluster not reported": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus = rb.Status.AggregatedStatus[:1]
		}},
		"withdrawn cluster still reporting": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Spec.Clusters = rb.Spec.Clusters[:1]
			rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{item("member2", 3, 3, 1)}
		}},
		"no status yet": {edit: func(rb *workv1alpha2.ResourceBinding) { rb.Status.AggregatedStatus[1].Status = nil }},
		"zero replicas": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[1] = item("member2", 0, 0, 1)
		}},
		"rolling out (surge pods)": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[1] = item("member2", 4, 1, 1)
		}},
		"member behind the manifest": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[1] = item("member2", 3, 3, 0)
		}},
		"move under way": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Annotations = map[string]string{rebalance.TargetAnnotation: `[]`}
		}},
		"move steering the HPAs": {edit: func(rb *workv1alpha2.ResourceBinding) {
			rb.Annotations = map[string]string{rebalance.HPALimitsAnnotation: `{}`}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rb := binding()
			tc.edit(rb)
			got, ok := membersSum(rb)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("membersSum = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
