package spreadconstraint

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

type rl = map[corev1.ResourceName]string

// world: two clusters in east (zones e1, e2), two in west (w1 twice), one
// in north; providers aws/gcp; team labels.
func world() []*clusterv1alpha1.Cluster {
	return []*clusterv1alpha1.Cluster{
		utiltesting.MakeCluster("a").Region("east").Zones("e1").Provider("aws").Label("team", "red").ResourceSummary(rl{"cpu": "1"}, nil).Obj(),
		utiltesting.MakeCluster("b").Region("east").Zones("e2").Provider("aws").Label("team", "red").ResourceSummary(rl{"cpu": "9"}, nil).Obj(),
		utiltesting.MakeCluster("c").Region("west").Zone("w1").Provider("gcp").Label("team", "blue").ResourceSummary(rl{"cpu": "2"}, nil).Obj(),
		utiltesting.MakeCluster("d").Region("west").Zones("w1").Provider("gcp").ResourceSummary(rl{"cpu": "3"}, nil).Obj(),
		utiltesting.MakeCluster("e").Region("north").Zones("n1").Provider("aws").Label("team", "green").Obj(),
	}
}

func names(cs []*clusterv1alpha1.Cluster) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func TestSelect(t *testing.T) {
	cases := map[string]struct {
		placement *policyv1alpha1.Placement
		// scores by cluster name; missing = 0
		scores  map[string]int64
		only    []string
		want    []string
		wantMsg string
	}{
		"no limiting constraint keeps everything in rank order": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 1, 0).Obj(),
			want:      []string{"a", "b", "c", "d", "e"},
		},
		"cluster maxGroups 2: the two best clusters": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj(),
			scores:    map[string]int64{"d": 100, "c": 100},
			want:      []string{"c", "d"},
		},
		"region minGroups 2 maxGroups 2: clusters of two regions": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 2).Obj(),
			want:      []string{"a", "c", "b", "d"},
		},
		"region minGroups 2 with cluster maxGroups 2: one cluster in each of two regions": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).
				SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj(),
			scores: map[string]int64{"b": 100},
			want:   []string{"b", "c"},
		},
		"region minGroups 2 and cluster maxGroups 2, region first in rank": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).
				SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).Obj(),
			scores: map[string]int64{"a": 100, "b": 90},
			want:   []string{"a", "c"},
		},
		"zone maxGroups 1: both clusters of the best zone": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldZone, 1, 1).Obj(),
			scores:    map[string]int64{"d": 100},
			want:      []string{"d", "c"},
		},
		"provider minGroups 2 maxGroups 2 with cluster maxGroups 2": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldProvider, 2, 2).
				SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj(),
			want: []string{"a", "c"},
		},
		"label minGroups 3 maxGroups 3": {
			placement: utiltesting.MakePlacement().SpreadByLabel("team", 3, 3).SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 3).Obj(),
			only:      []string{"a", "b", "c", "e"},
			want:      []string{"a", "c", "e"},
		},
		"dynamic weights rank equal scores by available replicas": {
			placement: utiltesting.MakePlacement().DynamicWeight().SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj(),
			want:      []string{"b", "d"},
		},
		"region minGroups 2 with one feasible region": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).Obj(),
			only:      []string{"a", "b"},
			wantMsg:   "spread constraint region: minGroups 2 but only 1 region has feasible clusters",
		},
		"label minGroups 4": {
			placement: utiltesting.MakePlacement().SpreadByLabel("team", 4, 0).Obj(),
			only:      []string{"a", "b", "c", "e"},
			wantMsg:   `spread constraint label "team": minGroups 4 but only 3 values of label "team" have feasible clusters`,
		},
		"region minGroups beyond the cluster maxGroups: one cluster per region, as Karmada": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 3, 0).
				SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj(),
			want: []string{"a", "c", "e"},
		},
		"Karmada's spread-by-region case: cluster maxGroups 1, region minGroups and maxGroups 2": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 1).
				SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 2).Obj(),
			want: []string{"a", "c"},
		},
		"constraints that cannot hold together": {
			placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).
				SpreadBy(policyv1alpha1.SpreadByFieldZone, 1, 1).Obj(),
			wantMsg: "spread constraint region: minGroups 2 but only 1 region could be selected within the maxGroups of the other constraints",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var candidates []framework.ClusterScore
			keep := map[string]bool{}
			for _, n := range tc.only {
				keep[n] = true
			}
			for _, c := range world() {
				if len(tc.only) == 0 || keep[c.Name] {
					candidates = append(candidates, framework.ClusterScore{Cluster: c, Score: tc.scores[c.Name]})
				}
			}
			// The Framework's order: score descending, then name.
			for i := range candidates {
				for j := i + 1; j < len(candidates); j++ {
					if candidates[j].Score > candidates[i].Score {
						candidates[i], candidates[j] = candidates[j], candidates[i]
					}
				}
			}
			b := utiltesting.MakeBinding("web", "ns").Replicas(4).ResourceRequest(rl{"cpu": "1"}).Placement(tc.placement).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, world())
			got, st := SpreadConstraint{}.Select(context.Background(), sc, candidates)
			if st.Message() != tc.wantMsg {
				t.Fatalf("message = %q, want %q", st.Message(), tc.wantMsg)
			}
			if tc.wantMsg != "" {
				if st.Code() != framework.Unschedulable {
					t.Errorf("code = %v, want Unschedulable", st.Code())
				}
				return
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	cases := map[string]struct {
		placement *policyv1alpha1.Placement
		cluster   *clusterv1alpha1.Cluster
		wantMsg   string
	}{
		"no constraints":            {placement: utiltesting.MakePlacement().Obj(), cluster: utiltesting.MakeCluster("x").Obj()},
		"cluster constraint":        {placement: utiltesting.MakePlacement().SpreadBy("", 1, 2).Obj(), cluster: utiltesting.MakeCluster("x").Obj()},
		"region present":            {placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Region("r").Obj()},
		"region missing":            {placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Obj(), wantMsg: "cluster(s) had no region for spreadConstraints"},
		"deprecated zone counts":    {placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldZone, 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Zone("z").Obj()},
		"provider missing":          {placement: utiltesting.MakePlacement().SpreadBy(policyv1alpha1.SpreadByFieldProvider, 1, 0).Obj(), cluster: utiltesting.MakeCluster("x").Obj(), wantMsg: "cluster(s) had no provider for spreadConstraints"},
		"label missing":             {placement: utiltesting.MakePlacement().SpreadByLabel("team", 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Obj(), wantMsg: `cluster(s) had no label "team" for spreadConstraints`},
		"label with an empty value": {placement: utiltesting.MakePlacement().SpreadByLabel("team", 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Label("team", "").Obj(), wantMsg: `cluster(s) had no label "team" for spreadConstraints`},
		"label present":             {placement: utiltesting.MakePlacement().SpreadByLabel("team", 2, 0).Obj(), cluster: utiltesting.MakeCluster("x").Label("team", "t").Obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := utiltesting.MakeBinding("web", "ns").Placement(tc.placement).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, nil)
			st := SpreadConstraint{}.Filter(context.Background(), sc, tc.cluster)
			if st.Message() != tc.wantMsg {
				t.Errorf("message = %q, want %q", st.Message(), tc.wantMsg)
			}
		})
	}
}

// FuzzSelect checks the selection invariants for random clusters and
// constraints: a result never exceeds any maxGroups, always reaches every
// minGroups, holds only candidates, once each; and an Unschedulable
// answer for a single constraint means there were fewer groups than
// minGroups.
func FuzzSelect(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, uint8(2), uint8(2), uint8(0), uint8(3), false)
	f.Add([]byte{7, 7, 7, 1}, uint8(3), uint8(0), uint8(1), uint8(2), true)
	f.Fuzz(func(t *testing.T, raw []byte, regionMin, regionMax, clusterMin, clusterMax uint8, byLabel bool) {
		if len(raw) > 16 {
			raw = raw[:16]
		}
		var candidates []framework.ClusterScore
		for i, b := range raw {
			w := utiltesting.MakeCluster(string(rune('a'+i))).Region(string(rune('p'+b%4))).Label("team", string(rune('x'+b/4%3)))
			candidates = append(candidates, framework.ClusterScore{Cluster: w.Obj(), Score: int64(b % 3)})
		}
		for i := range candidates {
			for j := i + 1; j < len(candidates); j++ {
				if candidates[j].Score > candidates[i].Score {
					candidates[i], candidates[j] = candidates[j], candidates[i]
				}
			}
		}
		first := policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: int32(regionMin % 5), MaxGroups: int32(regionMax % 5)}
		if byLabel {
			first = policyv1alpha1.SpreadConstraint{SpreadByLabel: "team", MinGroups: first.MinGroups, MaxGroups: first.MaxGroups}
		}
		constraints := []policyv1alpha1.SpreadConstraint{first,
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: int32(clusterMin % 5), MaxGroups: int32(clusterMax % 6)}}
		for _, c := range constraints {
			if c.MaxGroups > 0 && c.MinGroups > c.MaxGroups {
				return // rejected by the API
			}
		}
		p := utiltesting.MakePlacement().Obj()
		p.SpreadConstraints = constraints
		b := utiltesting.MakeBinding("web", "ns").Replicas(1).Placement(p).Obj()
		sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, nil)
		got, st := SpreadConstraint{}.Select(context.Background(), sc, candidates)
		if st.Code() == framework.Error {
			t.Fatalf("error: %s", st.Message())
		}
		if st.Code() == framework.Unschedulable {
			if !limits(constraints) {
				t.Fatalf("unschedulable without a limiting constraint: %s", st.Message())
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range got {
			if seen[c.Name] {
				t.Fatalf("%s selected twice", c.Name)
			}
			seen[c.Name] = true
		}
		for _, c := range constraints {
			groups := map[string]bool{}
			for _, cl := range got {
				groups[GroupOf(cl, c)] = true
			}
			n := int32(len(groups))
			if c.MaxGroups > 0 && n > c.MaxGroups {
				t.Fatalf("%s: %d groups > maxGroups %d: %v", Describe(c), n, c.MaxGroups, names(got))
			}
			if limits(constraints) && n < c.MinGroups {
				t.Fatalf("%s: %d groups < minGroups %d: %v", Describe(c), n, c.MinGroups, names(got))
			}
		}
		if !limits(constraints) && len(got) != len(candidates) {
			t.Fatalf("no limiting constraint, but %d of %d selected", len(got), len(candidates))
		}
	})
}
