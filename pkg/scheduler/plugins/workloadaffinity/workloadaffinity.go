// Package workloadaffinity is the WorkloadAffinity filter, Karmada's
// placement.workloadAffinity: a workload of an affinity group goes only
// to clusters every placed workload of its group runs on (the group's
// first goes anywhere), and a workload of an anti-affinity group stays
// off clusters another workload of its group runs on. Groups are
// namespaced and read from the binding's spec.workloadAffinityGroups.
//
// A cluster the binding already runs on always passes, as in Karmada:
// this filter never removes a placed workload (a group member that moved
// later does not evict the others).
package workloadaffinity

import (
	"context"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin (Karmada's names its two plugins WorkloadAffinity
// and WorkloadAntiAffinity; one filter serves both terms here).
const Name = "WorkloadAffinity"

// Reasons, counted across clusters in the diagnosis.
const (
	ReasonAffinity     = "cluster(s) did not run every workload of the workload affinity group"
	ReasonAntiAffinity = "cluster(s) already run a workload of the workload anti-affinity group"
)

// WorkloadAffinity filters clusters by the binding's workload groups.
type WorkloadAffinity struct{}

var _ framework.FilterPlugin = WorkloadAffinity{}

// New builds the plugin.
func New() (framework.Plugin, error) { return WorkloadAffinity{}, nil }

// Name returns the plugin name.
func (WorkloadAffinity) Name() string { return Name }

// Filter rejects clusters that break the binding's workload affinity or
// anti-affinity.
func (WorkloadAffinity) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	w := sc.Workloads
	if w == nil || sc.PreviouslyScheduled(cluster.Name) {
		return nil
	}
	for _, placed := range w.Affinity {
		if !placed[cluster.Name] {
			return framework.NewStatus(framework.Unschedulable, ReasonAffinity+" "+w.AffinityGroup)
		}
	}
	if w.AntiAffinity[cluster.Name] {
		return framework.NewStatus(framework.Unschedulable, ReasonAntiAffinity+" "+w.AntiAffinityGroup)
	}
	return nil
}
