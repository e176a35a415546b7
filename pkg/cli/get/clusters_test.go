package get

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

func TestClusterRow(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	q := resource.MustParse
	cases := map[string]struct {
		cluster clusterv1alpha1.Cluster
		want    []string
	}{
		"ready with status": {
			cluster: clusterv1alpha1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Name: "member1", CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour))},
				Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Region: "cn-east", Zones: []string{"cn-east-1a"}},
				Status: clusterv1alpha1.ClusterStatus{
					KubernetesVersion: "v1.37.2",
					Conditions:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}},
					NodeSummary:       &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 2},
					ResourceSummary: &clusterv1alpha1.ResourceSummary{
						Allocatable: corev1.ResourceList{"cpu": q("24"), "memory": q("96Gi")},
						Allocated:   corev1.ResourceList{"cpu": q("1500m"), "memory": q("1536Mi")},
					},
				},
			},
			want: []string{"member1", "True", "v1.37.2", "Push", "cn-east", "cn-east-1a", "2/3", "1.5/24", "1.5Gi/96Gi", "3h"},
		},
		"not probed yet, deprecated zone": {
			cluster: clusterv1alpha1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Name: "new"},
				Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, Zone: "z1"},
			},
			want: []string{"new", "", "", "Pull", "", "z1", "", "", "", ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterRow(&tc.cluster, now)); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}
