// Package replicaassignment is the ReplicaAssignment plugin: it turns the
// selected clusters into the binding's target clusters.
//
//   - Non-workloads (spec.replicas 0) go to every selected cluster, without
//     replicas.
//   - Duplicated (also a nil replicaScheduling) gives every selected cluster
//     spec.replicas.
//   - Divided/Weighted with static weights (or none: equal weights) divides
//     by the Webster method (package division); clusters left with 0
//     replicas are dropped, as Karmada drops them.
//
// Not supported yet (an Error, so the binding reports SchedulerError):
// Divided/Aggregated, dynamic weights, and spread constraints that limit
// the clusters (maxGroups > 0 or minGroups > 1) outside static-weight
// division, where Karmada ignores them too.
package replicaassignment

import (
	"context"
	"fmt"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/division"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ReplicaAssignment"

// ReplicaAssignment assigns replicas to the selected clusters.
type ReplicaAssignment struct{}

var _ framework.AssignPlugin = ReplicaAssignment{}

// New builds the plugin.
func New() (framework.Plugin, error) { return ReplicaAssignment{}, nil }

// Name returns the plugin name.
func (ReplicaAssignment) Name() string { return Name }

// Assign divides the binding's replicas over selected.
func (ReplicaAssignment) Assign(_ context.Context, sc *framework.SchedulingContext, selected []*clusterv1alpha1.Cluster) ([]workv1alpha2.TargetCluster, *framework.Status) {
	p := sc.Placement
	staticWeighted := framework.IsStaticWeighted(p)
	if !staticWeighted && limitsClusters(p.SpreadConstraints) {
		return nil, framework.NewStatus(framework.Error, "spreadConstraints with maxGroups or minGroups are not supported by this scheduler version yet")
	}
	replicas := sc.Replicas()
	if replicas == 0 {
		return all(selected, 0), nil
	}
	switch framework.ReplicaSchedulingType(p) {
	case policyv1alpha1.ReplicaSchedulingTypeDuplicated:
		return all(selected, replicas), nil
	case policyv1alpha1.ReplicaSchedulingTypeDivided:
	default:
		return nil, framework.NewStatus(framework.Error,
			fmt.Sprintf("unknown replicaSchedulingType %q", p.ReplicaScheduling.ReplicaSchedulingType))
	}
	switch pref := framework.DivisionPreference(p); {
	case pref == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return nil, framework.NewStatus(framework.Error, "replicaDivisionPreference Aggregated is not supported by this scheduler version yet")
	case pref != policyv1alpha1.ReplicaDivisionPreferenceWeighted:
		return nil, framework.NewStatus(framework.Error, fmt.Sprintf("unknown replicaDivisionPreference %q", pref))
	case !staticWeighted:
		return nil, framework.NewStatus(framework.Error, "weightPreference.dynamicWeight is not supported by this scheduler version yet")
	}
	targets, err := division.ByStaticWeights(replicas, selected, p.ReplicaScheduling.WeightPreference, sc.ResourceUID())
	if err != nil {
		return nil, framework.AsStatus(fmt.Errorf("placement weightPreference: %w", err))
	}
	return withoutEmpty(targets), nil
}

func all(clusters []*clusterv1alpha1.Cluster, replicas int32) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, len(clusters))
	for i, c := range clusters {
		out[i] = workv1alpha2.TargetCluster{Name: c.Name, Replicas: replicas}
	}
	return out
}

func withoutEmpty(targets []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	out := targets[:0]
	for _, t := range targets {
		if t.Replicas > 0 {
			out = append(out, t)
		}
	}
	return out
}

// limitsClusters reports whether a spread constraint restricts the set of
// clusters (the defaulted minGroups 1 without maxGroups does not).
func limitsClusters(constraints []policyv1alpha1.SpreadConstraint) bool {
	for _, c := range constraints {
		if c.MaxGroups > 0 || c.MinGroups > 1 {
			return true
		}
	}
	return false
}
