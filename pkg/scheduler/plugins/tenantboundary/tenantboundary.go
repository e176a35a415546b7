// Package tenantboundary is the TenantBoundary filter: a binding placed by
// a tenant's policy uses only the clusters of the tenant's cluster set
// (SchedulingContext.Tenant), even when the policy's own affinity selects
// more, and a cluster that joins later is held to the set too. It runs
// first, so a cluster outside the set is diagnosed as such rather than by
// whatever else it fails.
package tenantboundary

import (
	"context"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "TenantBoundary"

// TenantBoundary filters clusters by the tenant's cluster set.
type TenantBoundary struct{}

var _ framework.FilterPlugin = TenantBoundary{}

// New builds the plugin.
func New() (framework.Plugin, error) { return TenantBoundary{}, nil }

// Name returns the plugin name.
func (TenantBoundary) Name() string { return Name }

// Filter rejects clusters outside the tenant's cluster set.
func (TenantBoundary) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	t := sc.Tenant
	if t == nil || t.Allows(cluster) {
		return nil
	}
	if t.Tenant == "" {
		return framework.NewStatus(framework.Unschedulable, "cluster(s) closed to the policy: "+t.Reason)
	}
	return framework.NewStatus(framework.Unschedulable, "cluster(s) outside tenant "+t.Tenant+"'s cluster set")
}
