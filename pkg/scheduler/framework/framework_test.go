package framework_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// rejectFilter rejects the named clusters with reason, or fails with an
// Error status on the cluster named in errorOn.
type rejectFilter struct {
	name    string
	reject  []string
	reason  string
	errorOn string
}

func (f rejectFilter) Name() string { return f.name }
func (f rejectFilter) Filter(_ context.Context, _ *framework.SchedulingContext, c *clusterv1alpha1.Cluster) *framework.Status {
	if c.Name == f.errorOn {
		return framework.NewStatus(framework.Error, "broken selector")
	}
	if slices.Contains(f.reject, c.Name) {
		return framework.NewStatus(framework.Unschedulable, f.reason)
	}
	return nil
}

// fixedScore scores clusters from a map.
type fixedScore struct {
	name   string
	scores map[string]int64
}

func (s fixedScore) Name() string { return s.name }
func (s fixedScore) Score(_ context.Context, _ *framework.SchedulingContext, c *clusterv1alpha1.Cluster) (int64, *framework.Status) {
	return s.scores[c.Name], nil
}

// firstN selects the n best candidates and records what it was given.
type firstN struct {
	n    int
	seen *[]string
}

func (s firstN) Name() string { return "FirstN" }
func (s firstN) Select(_ context.Context, _ *framework.SchedulingContext, cs []framework.ClusterScore) ([]*clusterv1alpha1.Cluster, *framework.Status) {
	var out []*clusterv1alpha1.Cluster
	for _, c := range cs {
		*s.seen = append(*s.seen, c.Cluster.Name)
	}
	if len(cs) < s.n {
		return nil, framework.NewStatus(framework.Unschedulable, "not enough clusters")
	}
	for _, c := range cs[:s.n] {
		out = append(out, c.Cluster)
	}
	return out, nil
}

// reverseAssign gives each cluster one replica, in reverse order.
type reverseAssign struct{}

func (reverseAssign) Name() string { return "ReverseAssign" }
func (reverseAssign) Assign(_ context.Context, _ *framework.SchedulingContext, cs []*clusterv1alpha1.Cluster) ([]workv1alpha2.TargetCluster, *framework.Status) {
	var out []workv1alpha2.TargetCluster
	for i := len(cs) - 1; i >= 0; i-- {
		out = append(out, workv1alpha2.TargetCluster{Name: cs[i].Name, Replicas: 1})
	}
	return out, nil
}

func clusters(names ...string) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, len(names))
	for i, n := range names {
		out[i] = utiltesting.MakeCluster(n).Obj()
	}
	return out
}

func TestSchedule(t *testing.T) {
	var seen []string
	cases := map[string]struct {
		plugins      []framework.Plugin
		clusters     []*clusterv1alpha1.Cluster
		want         []workv1alpha2.TargetCluster
		wantSeen     []string
		wantFitErr   string
		wantUnsched  []string
		wantErr      bool
		wantFeasible int
	}{
		"all feasible, result sorted by name": {
			plugins:      []framework.Plugin{reverseAssign{}},
			clusters:     clusters("a", "b", "c"),
			want:         []workv1alpha2.TargetCluster{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 1}, {Name: "c", Replicas: 1}},
			wantFeasible: 3,
		},
		"a cluster is rejected by the first filter that fails": {
			plugins: []framework.Plugin{
				rejectFilter{name: "F1", reject: []string{"a"}, reason: "cluster(s) failed F1"},
				rejectFilter{name: "F2", reject: []string{"a", "b", "c"}, reason: "cluster(s) failed F2"},
				reverseAssign{},
			},
			clusters:    clusters("a", "b", "c"),
			wantFitErr:  "0/3 clusters are available: 2 cluster(s) failed F2, 1 cluster(s) failed F1.",
			wantUnsched: []string{"F1", "F2"},
		},
		"equal counts are listed alphabetically": {
			plugins: []framework.Plugin{
				rejectFilter{name: "F1", reject: []string{"b"}, reason: "cluster(s) zeta"},
				rejectFilter{name: "F2", reject: []string{"a"}, reason: "cluster(s) alpha"},
				reverseAssign{},
			},
			clusters:   clusters("a", "b"),
			wantFitErr: "0/2 clusters are available: 1 cluster(s) alpha, 1 cluster(s) zeta.",
		},
		"no clusters": {
			plugins:    []framework.Plugin{reverseAssign{}},
			wantFitErr: "0/0 clusters are available: no clusters are registered.",
		},
		"a filter error aborts the attempt": {
			plugins:  []framework.Plugin{rejectFilter{name: "F1", errorOn: "b"}, reverseAssign{}},
			clusters: clusters("a", "b"),
			wantErr:  true,
		},
		"select gets candidates by score, then name": {
			plugins: []framework.Plugin{
				fixedScore{name: "S1", scores: map[string]int64{"c": 50, "b": 10}},
				fixedScore{name: "S2", scores: map[string]int64{"a": 10, "d": 60}},
				firstN{n: 2, seen: &seen},
				reverseAssign{},
			},
			clusters:     clusters("a", "b", "c", "d"),
			wantSeen:     []string{"d", "c", "a", "b"},
			want:         []workv1alpha2.TargetCluster{{Name: "c", Replicas: 1}, {Name: "d", Replicas: 1}},
			wantFeasible: 4,
		},
		"select finds no acceptable set": {
			plugins: []framework.Plugin{
				rejectFilter{name: "F1", reject: []string{"a"}, reason: "cluster(s) failed F1"},
				firstN{n: 3, seen: &seen},
				reverseAssign{},
			},
			clusters:    clusters("a", "b", "c"),
			wantSeen:    []string{"b", "c"},
			wantFitErr:  "2/3 clusters are available: 1 cluster(s) failed F1; FirstN: not enough clusters.",
			wantUnsched: []string{"F1", "FirstN"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			seen = nil
			fw, err := framework.NewWithPlugins(tc.plugins...)
			if err != nil {
				t.Fatal(err)
			}
			b := utiltesting.MakeBinding("web", "ns").Replicas(1).Obj()
			res, err := fw.Schedule(context.Background(), framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, tc.clusters))
			if diff := cmp.Diff(tc.wantSeen, seen); diff != "" {
				t.Errorf("candidates given to select (-want +got):\n%s", diff)
			}
			var fitErr *framework.FitError
			switch {
			case tc.wantFitErr != "":
				if !errors.As(err, &fitErr) {
					t.Fatalf("err = %v, want a FitError", err)
				}
				if err.Error() != tc.wantFitErr {
					t.Errorf("message:\n got %s\nwant %s", err, tc.wantFitErr)
				}
				if tc.wantUnsched != nil {
					if diff := cmp.Diff(tc.wantUnsched, fitErr.UnschedulablePlugins()); diff != "" {
						t.Errorf("unschedulable plugins (-want +got):\n%s", diff)
					}
				}
				return
			case tc.wantErr:
				if err == nil || errors.As(err, &fitErr) {
					t.Fatalf("err = %v, want a non-fit error", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if res.Feasible != tc.wantFeasible {
				t.Errorf("feasible = %d, want %d", res.Feasible, tc.wantFeasible)
			}
		})
	}
}

func TestNewWithPlugins(t *testing.T) {
	cases := map[string]struct {
		plugins []framework.Plugin
		wantErr bool
	}{
		"one assigner":    {plugins: []framework.Plugin{reverseAssign{}}},
		"no assigner":     {plugins: []framework.Plugin{rejectFilter{name: "F1"}}, wantErr: true},
		"two assigners":   {plugins: []framework.Plugin{reverseAssign{}, renamedAssign{}}, wantErr: true},
		"duplicate names": {plugins: []framework.Plugin{rejectFilter{name: "F1"}, rejectFilter{name: "F1"}, reverseAssign{}}, wantErr: true},
		"two selectors": {
			plugins: []framework.Plugin{firstN{}, renamedSelect{}, reverseAssign{}}, wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := framework.NewWithPlugins(tc.plugins...)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

type renamedAssign struct{ reverseAssign }

func (renamedAssign) Name() string { return "Other" }

type renamedSelect struct{ firstN }

func (renamedSelect) Name() string { return "OtherSelect" }

func TestNew(t *testing.T) {
	registry := framework.Registry{
		{Name: "F1", Factory: func() (framework.Plugin, error) { return rejectFilter{name: "F1"}, nil }},
		{Name: "F2", Factory: func() (framework.Plugin, error) { return rejectFilter{name: "F2"}, nil }},
		{Name: "ReverseAssign", Factory: func() (framework.Plugin, error) { return reverseAssign{}, nil }},
	}
	cases := map[string]struct {
		selection []string
		want      map[string][]string
		wantErr   bool
	}{
		"default: all": {
			want: map[string][]string{"filter": {"F1", "F2"}, "assign": {"ReverseAssign"}},
		},
		"all but one": {
			selection: []string{"*", "-F1"},
			want:      map[string][]string{"filter": {"F2"}, "assign": {"ReverseAssign"}},
		},
		"only some": {
			selection: []string{"F2", "ReverseAssign"},
			want:      map[string][]string{"filter": {"F2"}, "assign": {"ReverseAssign"}},
		},
		"without an assigner": {selection: []string{"*", "-ReverseAssign"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fw, err := framework.New(registry, tc.selection)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, fw.PluginNames()); diff != "" {
				t.Errorf("plugins (-want +got):\n%s", diff)
			}
		})
	}
}

// namesFilter keeps the clusters the attempt's affinity names, and fails
// with an Error status when the affinity names "broken".
type namesFilter struct{}

func (namesFilter) Name() string { return "Names" }
func (namesFilter) Filter(_ context.Context, sc *framework.SchedulingContext, c *clusterv1alpha1.Cluster) *framework.Status {
	if sc.ClusterAffinity == nil || slices.Contains(sc.ClusterAffinity.ClusterNames, c.Name) {
		return nil
	}
	if slices.Contains(sc.ClusterAffinity.ClusterNames, "broken") {
		return framework.NewStatus(framework.Error, "broken term")
	}
	return framework.NewStatus(framework.Unschedulable, "cluster(s) not named")
}

func TestScheduleAffinityTerms(t *testing.T) {
	term := func(_ string, clusters ...string) policyv1alpha1.ClusterAffinity { // the name only reads well
		return policyv1alpha1.ClusterAffinity{ClusterNames: clusters}
	}
	cases := map[string]struct {
		placement    *policyv1alpha1.Placement
		observed     string
		want         []workv1alpha2.TargetCluster
		wantAffinity string
		wantFitErr   string
		wantErr      bool
	}{
		"the first term that fits": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "x")).AffinityTerm("b", term("b", "y")).Obj(),
			want:         []workv1alpha2.TargetCluster{{Name: "x", Replicas: 1}},
			wantAffinity: "a",
		},
		"falls to the next term on a fit error": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "nowhere")).AffinityTerm("b", term("b", "y")).Obj(),
			want:         []workv1alpha2.TargetCluster{{Name: "y", Replicas: 1}},
			wantAffinity: "b",
		},
		"starts from the observed term": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "x")).AffinityTerm("b", term("b", "y")).Obj(),
			observed:     "b",
			want:         []workv1alpha2.TargetCluster{{Name: "y", Replicas: 1}},
			wantAffinity: "b",
		},
		"an unknown observed term starts from the first": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "x")).AffinityTerm("b", term("b", "y")).Obj(),
			observed:     "gone",
			want:         []workv1alpha2.TargetCluster{{Name: "x", Replicas: 1}},
			wantAffinity: "a",
		},
		"no term fits: every term in the message, the starting term kept": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "p")).AffinityTerm("b", term("b", "q")).Obj(),
			wantFitErr:   `no clusterAffinities term fits: term "a": 0/2 clusters are available: 2 cluster(s) not named; term "b": 0/2 clusters are available: 2 cluster(s) not named.`,
			wantAffinity: "a",
		},
		"an error does not fall through": {
			placement:    utiltesting.MakePlacement().AffinityTerm("a", term("a", "broken")).AffinityTerm("b", term("b", "y")).Obj(),
			wantErr:      true,
			wantAffinity: "a",
		},
		"clusterAffinity wins over clusterAffinities": {
			placement: func() *policyv1alpha1.Placement {
				p := utiltesting.MakePlacement().ClusterNames("y").AffinityTerm("a", term("a", "x")).Obj()
				return p
			}(),
			want: []workv1alpha2.TargetCluster{{Name: "y", Replicas: 1}},
		},
	}
	fw, err := framework.NewWithPlugins(namesFilter{}, reverseAssign{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := utiltesting.MakeBinding("web", "ns").Replicas(1).Placement(tc.placement).ObservedAffinityName(tc.observed).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec, Status: &b.Status}, clusters("x", "y"))
			res, err := fw.Schedule(context.Background(), sc)
			if sc.AffinityName != tc.wantAffinity {
				t.Errorf("AffinityName = %q, want %q", sc.AffinityName, tc.wantAffinity)
			}
			var fitErr *framework.FitError
			switch {
			case tc.wantFitErr != "":
				if !errors.As(err, &fitErr) || err.Error() != tc.wantFitErr {
					t.Fatalf("err = %v, want fit error %s", err, tc.wantFitErr)
				}
				if fitErr.Reason() != workv1alpha2.BindingReasonNoClusterFit {
					t.Errorf("reason %s", fitErr.Reason())
				}
				return
			case tc.wantErr:
				if err == nil || errors.As(err, &fitErr) {
					t.Fatalf("err = %v, want a scheduler error", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if res.AffinityName != tc.wantAffinity {
				t.Errorf("Result.AffinityName = %q, want %q", res.AffinityName, tc.wantAffinity)
			}
		})
	}
}
