// Package plugins assembles atoll's in-tree scheduler plugins.
package plugins

import (
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/apienablement"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clustereviction"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusterlocality"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/componentfit"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/replicaassignment"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/spreadconstraint"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/tainttoleration"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/tenantboundary"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/workloadaffinity"
)

// NewInTreeRegistry lists the in-tree plugins in run order. The tenant
// boundary comes first (a cluster outside it is out whatever else holds);
// then the filters that express the user's intent, so a cluster's
// diagnosis names the most meaningful reason: affinity (to clusters, then
// to other workloads), then eviction,
// taints, APIs and the properties spread constraints group by.
func NewInTreeRegistry() framework.Registry {
	return framework.Registry{
		{Name: tenantboundary.Name, Factory: tenantboundary.New},
		{Name: clusteraffinity.Name, Factory: clusteraffinity.New},
		{Name: workloadaffinity.Name, Factory: workloadaffinity.New},
		{Name: clustereviction.Name, Factory: clustereviction.New},
		{Name: tainttoleration.Name, Factory: tainttoleration.New},
		{Name: apienablement.Name, Factory: apienablement.New},
		{Name: componentfit.Name, Factory: componentfit.New},
		{Name: spreadconstraint.Name, Factory: spreadconstraint.New},
		{Name: clusterlocality.Name, Factory: clusterlocality.New},
		{Name: replicaassignment.Name, Factory: replicaassignment.New},
	}
}
