package rebalance

import (
	"testing"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestGradual(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{utiltesting.MakeCluster("a").Obj(), utiltesting.MakeCluster("b").Obj()}
	placement := utiltesting.MakePlacement().ClusterWeight("a", 1).ClusterWeight("b", 1).Obj()
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 12, Placement: placement}
	duplicated := &workv1alpha2.ResourceBindingSpec{Replicas: 12, Placement: utiltesting.MakePlacement().Duplicated().Obj()}
	evicting := &workv1alpha2.ResourceBindingSpec{Replicas: 12, Placement: placement,
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{FromCluster: "a"}}}
	cases := map[string]struct {
		cur, next Distribution
		hasTarget bool
		optedOut  bool
		spec      *workv1alpha2.ResourceBindingSpec
		want      bool
	}{
		"weights change":                     {cur: dist("a", 6, "b", 6), next: dist("a", 4, "b", 8), spec: spec, want: true},
		"scale up is at once":                {cur: dist("a", 6, "b", 6), next: dist("a", 7, "b", 7), spec: spec},
		"first placement is at once":         {cur: dist(), next: dist("a", 6, "b", 6), spec: spec},
		"a move under way stays gradual":     {cur: dist("a", 5, "b", 7), next: dist("a", 6, "b", 6), hasTarget: true, spec: spec, want: true},
		"opted out":                          {cur: dist("a", 6, "b", 6), next: dist("a", 4, "b", 8), optedOut: true, spec: spec},
		"failover evicting wins":             {cur: dist("a", 6, "b", 6), next: dist("b", 12), hasTarget: true, spec: evicting},
		"a cluster that is gone":             {cur: dist("a", 6, "c", 6), next: dist("a", 6, "b", 6), spec: spec},
		"no replicas (not a workload)":       {cur: dist("a", 1), next: dist("b", 1), spec: &workv1alpha2.ResourceBindingSpec{Placement: placement}},
		"duplicated moves at once":           {cur: dist("a", 1), next: dist("b", 1), spec: duplicated},
		"an empty result is never a move to": {cur: dist("a", 6), next: dist(), hasTarget: true, spec: spec},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Gradual(tc.cur, tc.next, tc.hasTarget, tc.optedOut, tc.spec, clusters); got != tc.want {
				t.Errorf("Gradual = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTargetRoundTrip(t *testing.T) {
	in := []workv1alpha2.TargetCluster{{Name: "b", Replicas: 9}, {Name: "a", Replicas: 3}}
	got, err := DecodeTarget(EncodeTarget(in))
	if err != nil {
		t.Fatal(err)
	}
	if !FromTargets(got).Equal(FromTargets(in)) || got[0].Name != "a" {
		t.Errorf("round trip gave %v", got)
	}
	if _, err := DecodeTarget("not json"); err == nil {
		t.Error("DecodeTarget accepted garbage")
	}
}
