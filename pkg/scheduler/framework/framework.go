package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utilselection "github.com/atoll-dev/atoll/pkg/util/selection"
)

// Factory builds a plugin.
type Factory func() (Plugin, error)

// PluginEntry is a named plugin factory.
type PluginEntry struct {
	Name    string
	Factory Factory
}

// Registry lists plugins in the order the Framework runs them: filters in
// registry order (a cluster's diagnosis names the first filter that
// rejected it), scores summed.
type Registry []PluginEntry

// Enabled reports whether plugin name is selected, Kubernetes style: "*"
// enables all, "name" enables one, "-name" disables one; the first match
// wins. A nil or empty selection enables all.
func Enabled(name string, selection []string) bool {
	return len(selection) == 0 || utilselection.Enabled(name, selection)
}

// Framework runs scheduling attempts with a fixed set of plugins. It holds
// no per-attempt state and is safe for concurrent use.
type Framework struct {
	filters  []FilterPlugin
	scorers  []ScorePlugin
	selector SelectPlugin
	assigner AssignPlugin
}

// New builds a Framework from the registry's plugins that selection
// enables (see Enabled).
func New(r Registry, selection []string) (*Framework, error) {
	var plugins []Plugin
	for _, e := range r {
		if !Enabled(e.Name, selection) {
			continue
		}
		p, err := e.Factory()
		if err != nil {
			return nil, fmt.Errorf("building scheduler plugin %s: %w", e.Name, err)
		}
		plugins = append(plugins, p)
	}
	return NewWithPlugins(plugins...)
}

// NewWithPlugins builds a Framework from plugins, sorted into filter,
// score, select and assign plugins by the interfaces they implement (one
// plugin may be several). At most one select plugin (none keeps every
// feasible cluster) and exactly one assign plugin are allowed.
func NewWithPlugins(plugins ...Plugin) (*Framework, error) {
	f := &Framework{}
	seen := map[string]bool{}
	for _, p := range plugins {
		if seen[p.Name()] {
			return nil, fmt.Errorf("scheduler plugin %s is registered twice", p.Name())
		}
		seen[p.Name()] = true
		if fp, ok := p.(FilterPlugin); ok {
			f.filters = append(f.filters, fp)
		}
		if sp, ok := p.(ScorePlugin); ok {
			f.scorers = append(f.scorers, sp)
		}
		if sp, ok := p.(SelectPlugin); ok {
			if f.selector != nil {
				return nil, fmt.Errorf("scheduler plugins %s and %s both select clusters; enable one", f.selector.Name(), sp.Name())
			}
			f.selector = sp
		}
		if ap, ok := p.(AssignPlugin); ok {
			if f.assigner != nil {
				return nil, fmt.Errorf("scheduler plugins %s and %s both assign replicas; enable one", f.assigner.Name(), ap.Name())
			}
			f.assigner = ap
		}
	}
	if f.assigner == nil {
		return nil, fmt.Errorf("no scheduler plugin assigns replicas")
	}
	return f, nil
}

// PluginNames lists the plugins of each extension point, for logs.
func (f *Framework) PluginNames() map[string][]string {
	out := map[string][]string{}
	for _, p := range f.filters {
		out["filter"] = append(out["filter"], p.Name())
	}
	for _, p := range f.scorers {
		out["score"] = append(out["score"], p.Name())
	}
	if f.selector != nil {
		out["select"] = []string{f.selector.Name()}
	}
	out["assign"] = []string{f.assigner.Name()}
	return out
}

// Result is a successful scheduling attempt.
type Result struct {
	// Clusters is the new spec.clusters, sorted by name.
	Clusters []workv1alpha2.TargetCluster
	// AffinityName is the clusterAffinities term used (empty for
	// clusterAffinity or none).
	AffinityName string
	// Feasible is how many clusters passed the filters.
	Feasible int
}

// Schedule runs one attempt: filter → score → select → assign. It returns
// a *FitError when the binding fits nowhere (Scheduled=False,
// NoClusterFit), another error when the attempt cannot be computed
// (SchedulerError).
//
// With clusterAffinities, the terms are tried in order from the starting
// term (SchedulingContext.AffinityTerms); the next term is tried only when
// one cannot fit (a *FitError: no feasible cluster, spread constraints
// unmet, or not enough available replicas for dynamic division). When no
// term fits, the error is a *TermsFitError and the context keeps the
// starting term.
func (f *Framework) Schedule(ctx context.Context, sc *SchedulingContext) (*Result, error) {
	terms := sc.AffinityTerms()
	if len(terms) == 0 {
		return f.scheduleOnce(ctx, sc)
	}
	tfe := &TermsFitError{}
	for _, i := range terms {
		sc.UseAffinityTerm(i)
		res, err := f.scheduleOnce(ctx, sc)
		var fe *FitError
		if !errors.As(err, &fe) {
			return res, err
		}
		tfe.Terms = append(tfe.Terms, sc.AffinityName)
		tfe.Errors = append(tfe.Errors, fe)
	}
	sc.UseAffinityTerm(terms[0])
	return nil, tfe
}

func (f *Framework) scheduleOnce(ctx context.Context, sc *SchedulingContext) (*Result, error) {
	diag := Diagnosis{ClusterToStatus: map[string]*Status{}}
	feasible := make([]*clusterv1alpha1.Cluster, 0, len(sc.Clusters))
	for _, cluster := range sc.Clusters {
		st := f.runFilters(ctx, sc, cluster)
		switch st.Code() {
		case Success:
			feasible = append(feasible, cluster)
		case Unschedulable:
			diag.ClusterToStatus[cluster.Name] = st
		default:
			return nil, fmt.Errorf("filter %s on cluster %s: %w", st.Plugin(), cluster.Name, st.AsError())
		}
	}
	fitErr := func(st *Status) *FitError {
		diag.PostFilterStatus = st
		return &FitError{NumAllClusters: len(sc.Clusters), Feasible: len(feasible), Diagnosis: diag}
	}
	if len(feasible) == 0 {
		return nil, fitErr(nil)
	}

	candidates := make([]ClusterScore, len(feasible))
	for i, cluster := range feasible {
		candidates[i].Cluster = cluster
		for _, p := range f.scorers {
			s, st := p.Score(ctx, sc, cluster)
			if !st.IsSuccess() {
				return nil, fmt.Errorf("score %s on cluster %s: %s", p.Name(), cluster.Name, st.Message())
			}
			candidates[i].Score += s
		}
	}
	slices.SortStableFunc(candidates, func(a, b ClusterScore) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Cluster.Name, b.Cluster.Name)
	})

	var selected []*clusterv1alpha1.Cluster
	if f.selector != nil {
		var st *Status
		selected, st = f.selector.Select(ctx, sc, candidates)
		switch st.WithPlugin(f.selector.Name()).Code() {
		case Success:
		case Unschedulable:
			return nil, fitErr(st)
		default:
			return nil, fmt.Errorf("select %s: %w", f.selector.Name(), st.AsError())
		}
		if len(selected) == 0 {
			return nil, fitErr(NewStatus(Unschedulable, "no cluster was selected").WithPlugin(f.selector.Name()))
		}
	} else {
		selected = make([]*clusterv1alpha1.Cluster, len(candidates))
		for i, c := range candidates {
			selected[i] = c.Cluster
		}
	}

	targets, st := f.assigner.Assign(ctx, sc, selected)
	switch st.WithPlugin(f.assigner.Name()).Code() {
	case Success:
	case Unschedulable:
		return nil, fitErr(st)
	default:
		return nil, fmt.Errorf("assign %s: %w", f.assigner.Name(), st.AsError())
	}
	if len(targets) == 0 {
		return nil, fitErr(NewStatus(Unschedulable, "no cluster was assigned").WithPlugin(f.assigner.Name()))
	}
	slices.SortFunc(targets, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return &Result{Clusters: targets, AffinityName: sc.AffinityName, Feasible: len(feasible)}, nil
}

// runFilters returns the status of the first filter that does not pass.
func (f *Framework) runFilters(ctx context.Context, sc *SchedulingContext, cluster *clusterv1alpha1.Cluster) *Status {
	for _, p := range f.filters {
		if st := p.Filter(ctx, sc, cluster); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}
