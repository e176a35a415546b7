// Package replicaassignment is the ReplicaAssignment plugin: it turns the
// selected clusters into the binding's target clusters, as Karmada's
// assignReplicas.
//
//   - Non-workloads (spec.replicas 0) go to every selected cluster, without
//     replicas.
//   - Duplicated (also a nil replicaScheduling) gives every selected cluster
//     spec.replicas.
//   - Divided/Weighted with static weights (or none: equal weights) divides
//     by the Webster method (package division); clusters left with 0
//     replicas are dropped, as Karmada drops them.
//   - Divided/Weighted with dynamicWeight AvailableReplicas and
//     Divided/Aggregated divide by each cluster's available replicas
//     (division.Dynamic, Steady or Fresh); not enough available replicas
//     is Unschedulable.
package replicaassignment

import (
	"context"
	"errors"
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
	pref := framework.DivisionPreference(p)
	switch {
	case pref == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return dynamic(sc, selected, true)
	case pref != policyv1alpha1.ReplicaDivisionPreferenceWeighted:
		return nil, framework.NewStatus(framework.Error, fmt.Sprintf("unknown replicaDivisionPreference %q", pref))
	case framework.IsStaticWeighted(p):
		targets, err := division.ByStaticWeights(replicas, selected, p.ReplicaScheduling.WeightPreference, sc.ResourceUID())
		if err != nil {
			return nil, framework.AsStatus(fmt.Errorf("placement weightPreference: %w", err))
		}
		return withoutEmpty(targets), nil
	case p.ReplicaScheduling.WeightPreference.DynamicWeight == policyv1alpha1.DynamicWeightByAvailableReplicas:
		return dynamic(sc, selected, false)
	default:
		return nil, framework.NewStatus(framework.Error,
			fmt.Sprintf("unknown weightPreference.dynamicWeight %q", p.ReplicaScheduling.WeightPreference.DynamicWeight))
	}
}

// dynamic divides by available replicas (dynamic weights or Aggregated).
func dynamic(sc *framework.SchedulingContext, selected []*clusterv1alpha1.Cluster, aggregated bool) ([]workv1alpha2.TargetCluster, *framework.Status) {
	in := division.DynamicInput{
		Replicas:   sc.Replicas(),
		Candidates: make([]division.ClusterAvailable, len(selected)),
		Previous:   sc.PreviousReplicas(),
		Fresh:      sc.Fresh(),
		Aggregated: aggregated,
		UID:        sc.ResourceUID(),
	}
	for i, c := range selected {
		in.Candidates[i] = division.ClusterAvailable{Name: c.Name, Available: division.AvailableReplicas(c, sc.Binding.Spec.ReplicaRequirements, sc.Replicas())}
	}
	targets, err := division.Dynamic(in)
	var insufficient *division.InsufficientError
	if errors.As(err, &insufficient) {
		return nil, framework.NewStatus(framework.Unschedulable, err.Error())
	}
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	return targets, nil
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
