// Package spreadconstraint is the SpreadConstraint plugin: it honours the
// placement's spreadConstraints by cluster, region, zone, provider and
// cluster label (Karmada implements only cluster and region).
//
// Filter rejects clusters that have no value for a constrained property
// (no region for a region constraint, no such label for spreadByLabel), as
// Karmada's SpreadConstraint filter does.
//
// Select chooses the clusters, then the ReplicaAssignment plugin divides
// the replicas over them (for every replica scheduling type, static
// weights included — Karmada ignores spread constraints there). Clusters
// come ranked by score, then, for placements that divide by available
// replicas, by available replicas, then by name. A group's rank is the
// rank of its best cluster. Selection is greedy and deterministic:
//
//  1. Walk the clusters in rank order and take a cluster when it opens a
//     new group for a constraint that still has fewer than minGroups
//     groups, and opens no group beyond any constraint's maxGroups. A
//     group of a region, zone, provider or label constraint that is still
//     needed gets its cluster even beyond the cluster constraint's
//     maxGroups, as in Karmada (cluster maxGroups 1 with region
//     minGroups 2 picks one cluster in each of two regions).
//  2. Walk again and take every other cluster that opens no group beyond
//     any maxGroups (maxGroups 0 is unbounded). With spreadByField cluster
//     and maxGroups n, that is the n best clusters; with region maxGroups
//     2, every cluster of the two best regions.
//  3. Every constraint must then have at least minGroups groups, otherwise
//     the binding is Unschedulable with a message naming the constraint.
package spreadconstraint

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/division"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "SpreadConstraint"

// SpreadConstraint filters clusters without the spread properties and
// selects the clusters that satisfy the spread constraints.
type SpreadConstraint struct{}

var (
	_ framework.FilterPlugin = SpreadConstraint{}
	_ framework.SelectPlugin = SpreadConstraint{}
)

// New builds the plugin.
func New() (framework.Plugin, error) { return SpreadConstraint{}, nil }

// Name returns the plugin name.
func (SpreadConstraint) Name() string { return Name }

// Filter rejects clusters that lack a property a constraint groups by.
func (SpreadConstraint) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	for _, c := range sc.Placement.SpreadConstraints {
		if GroupOf(cluster, c) == "" {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster(s) had no %s for spreadConstraints", Describe(c)))
		}
	}
	return nil
}

// Select chooses the clusters that satisfy the spread constraints (see the
// package documentation).
func (SpreadConstraint) Select(_ context.Context, sc *framework.SchedulingContext, candidates []framework.ClusterScore) ([]*clusterv1alpha1.Cluster, *framework.Status) {
	constraints := sc.Placement.SpreadConstraints
	ranked := make([]*clusterv1alpha1.Cluster, len(candidates))
	for i, c := range candidates {
		ranked[i] = c.Cluster
	}
	if !limits(constraints) {
		return ranked, nil
	}
	if framework.UsesAvailableReplicas(sc.Placement) {
		avail := make(map[string]int32, len(candidates))
		for _, c := range candidates {
			avail[c.Cluster.Name] = division.AvailableReplicas(c.Cluster, sc.Binding.Spec.ReplicaRequirements, sc.Replicas())
		}
		slices.SortStableFunc(candidates, func(a, b framework.ClusterScore) int {
			if a.Score != b.Score {
				return cmp.Compare(b.Score, a.Score)
			}
			return cmp.Compare(avail[b.Cluster.Name], avail[a.Cluster.Name])
		})
		for i, c := range candidates {
			ranked[i] = c.Cluster
		}
	}

	// Feasible groups per constraint, for the minGroups message.
	for _, c := range constraints {
		groups := map[string]bool{}
		for _, cl := range ranked {
			groups[GroupOf(cl, c)] = true
		}
		if int32(len(groups)) < c.MinGroups {
			return nil, framework.NewStatus(framework.Unschedulable, fmt.Sprintf(
				"spread constraint %s: minGroups %d but only %s feasible clusters", Describe(c), c.MinGroups, count(len(groups), c)+" "+hasHave(len(groups))))
		}
	}

	chosen := make([]map[string]bool, len(constraints))
	for i := range chosen {
		chosen[i] = map[string]bool{}
	}
	// fits: cl opens no group beyond a maxGroups; overCluster ignores the
	// cluster constraint's (a needed region gets its cluster anyway).
	fits := func(cl *clusterv1alpha1.Cluster, overCluster bool) bool {
		for i, c := range constraints {
			if overCluster && c.SpreadByField == policyv1alpha1.SpreadByFieldCluster {
				continue
			}
			if g := GroupOf(cl, c); !chosen[i][g] && c.MaxGroups > 0 && int32(len(chosen[i])) >= c.MaxGroups {
				return false
			}
		}
		return true
	}
	// opensNeeded: cl opens a group a constraint still needs for its
	// minGroups (other than the cluster constraint, with topology).
	opensNeeded := func(cl *clusterv1alpha1.Cluster, topology bool) bool {
		for i, c := range constraints {
			if topology && c.SpreadByField == policyv1alpha1.SpreadByFieldCluster {
				continue
			}
			if g := GroupOf(cl, c); !chosen[i][g] && int32(len(chosen[i])) < c.MinGroups {
				return true
			}
		}
		return false
	}
	taken := make([]bool, len(ranked))
	var selected []*clusterv1alpha1.Cluster
	take := func(i int) {
		taken[i] = true
		selected = append(selected, ranked[i])
		for j, c := range constraints {
			chosen[j][GroupOf(ranked[i], c)] = true
		}
	}
	for i, cl := range ranked {
		if opensNeeded(cl, false) && fits(cl, opensNeeded(cl, true)) {
			take(i)
		}
	}
	for i, cl := range ranked {
		if !taken[i] && fits(cl, false) {
			take(i)
		}
	}
	for i, c := range constraints {
		if int32(len(chosen[i])) < c.MinGroups {
			return nil, framework.NewStatus(framework.Unschedulable, fmt.Sprintf(
				"spread constraint %s: minGroups %d but only %s could be selected within the maxGroups of the other constraints",
				Describe(c), c.MinGroups, count(len(chosen[i]), c)))
		}
	}
	return selected, nil
}

// limits reports whether a constraint can limit the cluster set: the
// defaulted minGroups 1 without maxGroups cannot.
func limits(constraints []policyv1alpha1.SpreadConstraint) bool {
	for _, c := range constraints {
		if c.MaxGroups > 0 || c.MinGroups > 1 {
			return true
		}
	}
	return false
}

// GroupOf is the group of cluster under constraint c, "" when the cluster
// has no value for it. A cluster's zone is its first spec.zones entry, or
// the deprecated spec.zone.
func GroupOf(cluster *clusterv1alpha1.Cluster, c policyv1alpha1.SpreadConstraint) string {
	if c.SpreadByLabel != "" {
		return cluster.Labels[c.SpreadByLabel]
	}
	switch c.SpreadByField {
	case policyv1alpha1.SpreadByFieldRegion:
		return cluster.Spec.Region
	case policyv1alpha1.SpreadByFieldZone:
		if len(cluster.Spec.Zones) > 0 {
			return cluster.Spec.Zones[0]
		}
		return cluster.Spec.Zone
	case policyv1alpha1.SpreadByFieldProvider:
		return cluster.Spec.Provider
	default: // cluster, or neither field nor label set
		return cluster.Name
	}
}

// Describe names what constraint c groups by: "region", `label "team"`.
func Describe(c policyv1alpha1.SpreadConstraint) string {
	if c.SpreadByLabel != "" {
		return fmt.Sprintf("label %q", c.SpreadByLabel)
	}
	if c.SpreadByField == "" {
		return string(policyv1alpha1.SpreadByFieldCluster)
	}
	return string(c.SpreadByField)
}

// count phrases n groups of c: "1 region", "2 zones", `1 value of label
// "team"`.
func count(n int, c policyv1alpha1.SpreadConstraint) string {
	noun := Describe(c)
	switch {
	case c.SpreadByLabel != "" && n == 1:
		noun = "value of " + noun
	case c.SpreadByLabel != "":
		noun = "values of " + noun
	case n != 1:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
