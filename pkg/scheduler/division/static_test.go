package division

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestByStaticWeights(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{
		utiltesting.MakeCluster("m1").Region("east").Label("tier", "gold").Obj(),
		utiltesting.MakeCluster("m2").Region("east").Obj(),
		utiltesting.MakeCluster("m3").Region("west").Obj(),
	}
	byName := func(n string, w int64) policyv1alpha1.StaticClusterWeight {
		return policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{n}}, Weight: w}
	}
	cases := map[string]struct {
		replicas int32
		pref     *policyv1alpha1.ClusterPreferences
		uid      types.UID
		want     []workv1alpha2.TargetCluster
		wantErr  bool
	}{
		"nil weightPreference: equal weights": {
			replicas: 6,
			want:     targets("m1", 2, "m2", 2, "m3", 2),
		},
		"empty staticWeightList: equal weights": {
			replicas: 4, pref: &policyv1alpha1.ClusterPreferences{},
			want: targets("m1", 2, "m2", 1, "m3", 1),
		},
		"12 at 3:2:1 by name": {
			replicas: 12,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				byName("m1", 3), byName("m2", 2), byName("m3", 1),
			}},
			want: targets("m1", 6, "m2", 4, "m3", 2),
		},
		"a cluster matched by several rules takes the largest weight": {
			replicas: 4,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "region", Operator: "In", Values: []string{"east"}}},
				}}, Weight: 1},
				{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}, Weight: 3},
			}},
			want: targets("m1", 3, "m2", 1),
		},
		"clusters no rule matches are dropped": {
			replicas: 5,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				byName("m1", 1), byName("m3", 1),
			}},
			want: targets("m1", 3, "m3", 2),
		},
		"odd UID hash gives the remainder to the last name": {
			replicas: 5, uid: oddUID,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				byName("m1", 1), byName("m3", 1),
			}},
			want: targets("m1", 2, "m3", 3),
		},
		"no rule matches any cluster: equal weights": {
			replicas: 3,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				byName("elsewhere", 5),
			}},
			want: targets("m1", 1, "m2", 1, "m3", 1),
		},
		"0-seat clusters with a weight are listed": {
			replicas: 1,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				byName("m1", 3), byName("m2", 1),
			}},
			want: targets("m1", 1, "m2", 0),
		},
		"invalid selector": {
			replicas: 1,
			pref: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}}, Weight: 1},
			}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ByStaticWeights(tc.replicas, clusters, tc.pref, tc.uid)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ByStaticWeights (-want +got):\n%s", diff)
			}
		})
	}
}
