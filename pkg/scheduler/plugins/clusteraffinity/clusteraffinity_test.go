package clusteraffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func field(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
	return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func TestMatches(t *testing.T) {
	m1 := utiltesting.MakeCluster("m1").Label("env", "prod").Provider("aws").Region("us-east-1").Zones("a", "b").Obj()
	legacy := utiltesting.MakeCluster("legacy").Region("eu").Zone("z1").Obj()
	bare := utiltesting.MakeCluster("bare").Obj()
	cases := map[string]struct {
		cluster  *clusterv1alpha1.Cluster
		affinity *policyv1alpha1.ClusterAffinity
		want     bool
		wantErr  bool
	}{
		"nil affinity":   {cluster: m1, want: true},
		"empty affinity": {cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{}, want: true},
		"clusterNames match": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m0", "m1"}}, want: true,
		},
		"clusterNames miss": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}},
		},
		"exclude wins over clusterNames": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}, ExcludeClusters: []string{"m1"}},
		},
		"exclude alone keeps the others": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"m2"}}, want: true,
		},
		"labelSelector match": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, want: true,
		},
		"labelSelector miss": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}},
		},
		"labelSelector and clusterNames must both match": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, ClusterNames: []string{"m2"},
			},
		},
		"invalid labelSelector": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Sometimes"}},
			}}, wantErr: true,
		},
		"provider In": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("provider", corev1.NodeSelectorOpIn, "gcp", "aws")}, want: true,
		},
		"region In miss": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("region", corev1.NodeSelectorOpIn, "us-west-1")},
		},
		"region NotIn": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("region", corev1.NodeSelectorOpNotIn, "us-west-1")}, want: true,
		},
		"region NotIn matches a cluster without region": {
			cluster: bare, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("region", corev1.NodeSelectorOpNotIn, "us-west-1")}, want: true,
		},
		"provider In misses a cluster without provider": {
			cluster: bare, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("provider", corev1.NodeSelectorOpIn, "aws")},
		},
		"zone In: all zones of the cluster in the values": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpIn, "a", "b", "c")}, want: true,
		},
		"zone In: one zone of the cluster not in the values": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpIn, "a")},
		},
		"zone NotIn: a zone of the cluster in the values": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpNotIn, "b")},
		},
		"zone NotIn: no zone in the values": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpNotIn, "c")}, want: true,
		},
		"zone In uses the deprecated spec.zone": {
			cluster: legacy, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpIn, "z1")}, want: true,
		},
		"zone In misses a cluster without zones": {
			cluster: bare, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("zone", corev1.NodeSelectorOpIn, "z1")},
		},
		"several field requirements must all hold": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}},
				{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu"}},
			}}},
		},
		"unsupported field key": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("name", corev1.NodeSelectorOpIn, "m1")}, wantErr: true,
		},
		"unsupported field operator": {
			cluster: m1, affinity: &policyv1alpha1.ClusterAffinity{FieldSelector: field("region", corev1.NodeSelectorOpExists)}, wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Matches(tc.cluster, tc.affinity)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	cluster := utiltesting.MakeCluster("m1").Label("env", "prod").Obj()
	cases := map[string]struct {
		placement   *policyv1alpha1.Placement
		wantCode    framework.Code
		wantReasons []string
	}{
		"no placement": {wantCode: framework.Success},
		"clusterAffinity matches": {
			placement: utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).Obj(),
			wantCode:  framework.Success,
		},
		"clusterAffinity misses": {
			placement:   utiltesting.MakePlacement().ClusterNames("m2").Obj(),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) did not match clusterAffinity"},
		},
		"first clusterAffinities term misses": {
			placement: utiltesting.MakePlacement().
				AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}).
				AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).Obj(),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{`cluster(s) did not match clusterAffinities term "primary"`},
		},
		"invalid selector is an error": {
			placement: utiltesting.MakePlacement().MatchLabels(map[string]string{"bad key!": "x"}).Obj(),
			wantCode:  framework.Error,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := utiltesting.MakeBinding("web", "default").Placement(tc.placement).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, []*clusterv1alpha1.Cluster{cluster})
			st := ClusterAffinity{}.Filter(context.Background(), sc, cluster)
			if st.Code() != tc.wantCode {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tc.wantCode)
			}
			if tc.wantCode != framework.Error {
				if diff := cmp.Diff(tc.wantReasons, st.Reasons()); diff != "" {
					t.Errorf("reasons (-want +got):\n%s", diff)
				}
			}
		})
	}
}
