// Package clusterlocality is the ClusterLocality score: clusters the
// binding is already scheduled to score MaxClusterScore, others 0, so a
// select step that has to choose prefers not to move workloads.
package clusterlocality

import (
	"context"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ClusterLocality"

// ClusterLocality scores the clusters of the previous result.
type ClusterLocality struct{}

var _ framework.ScorePlugin = ClusterLocality{}

// New builds the plugin.
func New() (framework.Plugin, error) { return ClusterLocality{}, nil }

// Name returns the plugin name.
func (ClusterLocality) Name() string { return Name }

// Score is MaxClusterScore for a cluster in spec.clusters, else 0.
func (ClusterLocality) Score(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) (int64, *framework.Status) {
	if sc.PreviouslyScheduled(cluster.Name) {
		return framework.MaxClusterScore, nil
	}
	return 0, nil
}
