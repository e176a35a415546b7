// Package clustereviction is the ClusterEviction filter: a cluster the
// binding is being gracefully evicted from (a gracefulEvictionTasks entry
// names it) is not a candidate.
package clustereviction

import (
	"context"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ClusterEviction"

// ClusterEviction filters out clusters under graceful eviction.
type ClusterEviction struct{}

var _ framework.FilterPlugin = ClusterEviction{}

// New builds the plugin.
func New() (framework.Plugin, error) { return ClusterEviction{}, nil }

// Name returns the plugin name.
func (ClusterEviction) Name() string { return Name }

// Filter rejects clusters named by a graceful eviction task.
func (ClusterEviction) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	if sc.Evicting(cluster.Name) {
		return framework.NewStatus(framework.Unschedulable, "cluster(s) were in the process of eviction")
	}
	return nil
}
