package workloadaffinity

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

func TestFilter(t *testing.T) {
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	cases := map[string]struct {
		groups   *framework.WorkloadGroups
		previous []string
		cluster  string
		want     string // "" passes, else a reason prefix
	}{
		"no groups":                    {cluster: "m1"},
		"first of its affinity group":  {groups: &framework.WorkloadGroups{AffinityGroup: "g=a"}, cluster: "m2"},
		"affinity met":                 {groups: &framework.WorkloadGroups{AffinityGroup: "g=a", Affinity: []map[string]bool{set("m1", "m2"), set("m2")}}, cluster: "m2"},
		"affinity missed by one":       {groups: &framework.WorkloadGroups{AffinityGroup: "g=a", Affinity: []map[string]bool{set("m1", "m2"), set("m2")}}, cluster: "m1", want: ReasonAffinity},
		"anti-affinity free cluster":   {groups: &framework.WorkloadGroups{AntiAffinityGroup: "g=b", AntiAffinity: set("m1")}, cluster: "m2"},
		"anti-affinity taken cluster":  {groups: &framework.WorkloadGroups{AntiAffinityGroup: "g=b", AntiAffinity: set("m1")}, cluster: "m1", want: ReasonAntiAffinity},
		"placed cluster always passes": {groups: &framework.WorkloadGroups{AntiAffinityGroup: "g=b", AntiAffinity: set("m1")}, previous: []string{"m1"}, cluster: "m1"},
		"both, anti-affinity rejects":  {groups: &framework.WorkloadGroups{AffinityGroup: "g=a", Affinity: []map[string]bool{set("m1")}, AntiAffinityGroup: "h=b", AntiAffinity: set("m1")}, cluster: "m1", want: ReasonAntiAffinity},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := &workv1alpha2.ResourceBindingSpec{}
			for _, c := range tc.previous {
				spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
			}
			sc := framework.NewSchedulingContext(&framework.BindingView{Kind: "ResourceBinding", Spec: spec}, nil)
			sc.Workloads = tc.groups
			st := WorkloadAffinity{}.Filter(context.Background(), sc, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: tc.cluster}})
			switch {
			case tc.want == "" && !st.IsSuccess():
				t.Fatalf("Filter = %s, want success", st.Message())
			case tc.want != "" && (st.Code() != framework.Unschedulable || !strings.HasPrefix(st.Message(), tc.want)):
				t.Fatalf("Filter = %v %q, want Unschedulable %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
}
