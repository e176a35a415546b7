// Package componentfit is the ComponentFit filter: a multi-component
// workload (spec.components: a FlinkDeployment's job and task managers, a
// Volcano job's tasks) placed on exactly one cluster (a cluster spread
// constraint with minGroups = maxGroups = 1) goes only to a cluster whose
// free resources hold all its components at once — Karmada's
// multi-template scheduling, which asks its estimators the same. With any
// other placement the components are not divided and the workload is
// propagated like a non-workload, as in Karmada.
package componentfit

import (
	"context"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/division"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ComponentFit"

// Reason, counted across clusters in the diagnosis.
const Reason = "cluster(s) had too little free "

// ComponentFit filters clusters by the workload's components.
type ComponentFit struct{}

var _ framework.FilterPlugin = ComponentFit{}

// New builds the plugin.
func New() (framework.Plugin, error) { return ComponentFit{}, nil }

// Name returns the plugin name.
func (ComponentFit) Name() string { return Name }

// Filter rejects clusters that cannot hold all the components.
func (ComponentFit) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	comps := sc.Binding.Spec.Components
	if len(comps) == 0 || !singleCluster(sc.Placement) || sc.PreviouslyScheduled(cluster.Name) {
		return nil
	}
	if ok, short := division.ComponentsFit(cluster, comps); !ok {
		return framework.NewStatus(framework.Unschedulable, Reason+string(short)+" for all components")
	}
	return nil
}

// singleCluster reports whether the placement puts the workload on exactly
// one cluster.
func singleCluster(p *policyv1alpha1.Placement) bool {
	for _, s := range p.SpreadConstraints {
		if s.SpreadByField == policyv1alpha1.SpreadByFieldCluster && s.MinGroups == 1 && s.MaxGroups == 1 {
			return true
		}
	}
	return false
}
