package componentfit

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

func TestFilter(t *testing.T) {
	cluster := func(cpu string, pods int64) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: clusterv1alpha1.ClusterStatus{
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}}}}
	}
	comps := []workv1alpha2.Component{
		{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
		{Name: "taskmanager", Replicas: 3, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
	}
	one := []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}}
	cases := map[string]struct {
		comps   []workv1alpha2.Component
		spread  []policyv1alpha1.SpreadConstraint
		cluster *clusterv1alpha1.Cluster
		want    string
	}{
		"no components":                  {spread: one, cluster: cluster("1", 10)},
		"not a single-cluster placement": {comps: comps, cluster: cluster("1", 10)},
		"fits exactly":                   {comps: comps, spread: one, cluster: cluster("3500m", 4)},
		"short of cpu":                   {comps: comps, spread: one, cluster: cluster("3", 10), want: Reason + "cpu"},
		"short of pods":                  {comps: comps, spread: one, cluster: cluster("10", 3), want: Reason + "pods"},
		"no summary":                     {comps: comps, spread: one, cluster: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}, want: Reason + "resourceSummary"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := &workv1alpha2.ResourceBindingSpec{Components: tc.comps, Placement: &policyv1alpha1.Placement{SpreadConstraints: tc.spread}}
			sc := framework.NewSchedulingContext(&framework.BindingView{Kind: "ResourceBinding", Spec: spec}, nil)
			st := ComponentFit{}.Filter(context.Background(), sc, tc.cluster)
			switch {
			case tc.want == "" && !st.IsSuccess():
				t.Fatalf("Filter = %s, want success", st.Message())
			case tc.want != "" && (st.Code() != framework.Unschedulable || !strings.HasPrefix(st.Message(), tc.want)):
				t.Fatalf("Filter = %v %q, want Unschedulable %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
}
