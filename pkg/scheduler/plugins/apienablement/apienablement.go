// Package apienablement is the APIEnablement filter: a cluster whose
// status lists the APIs it serves but not the binding's resource
// (apiVersion and kind) is rejected. A cluster that has not reported its
// APIs yet is kept, and so is a cluster the binding is already scheduled
// to while its API list is known to be incomplete
// (CompleteAPIEnablements=False): a member that is restarting should not
// lose its workloads.
package apienablement

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "APIEnablement"

// APIEnablement filters clusters by the APIs they serve.
type APIEnablement struct{}

var _ framework.FilterPlugin = APIEnablement{}

// New builds the plugin.
func New() (framework.Plugin, error) { return APIEnablement{}, nil }

// Name returns the plugin name.
func (APIEnablement) Name() string { return Name }

// Filter rejects clusters known not to serve the resource's API.
func (APIEnablement) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	enablements := cluster.Status.APIEnablements
	if len(enablements) == 0 {
		return nil
	}
	res := &sc.Binding.Spec.Resource
	if Enabled(enablements, res.APIVersion, res.Kind) {
		return nil
	}
	if sc.PreviouslyScheduled(cluster.Name) &&
		meta.IsStatusConditionFalse(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements) {
		return nil
	}
	return framework.NewStatus(framework.Unschedulable,
		fmt.Sprintf("cluster(s) did not serve the API %s %s", res.APIVersion, res.Kind))
}

// Enabled reports whether enablements list kind in apiVersion.
func Enabled(enablements []clusterv1alpha1.APIEnablement, apiVersion, kind string) bool {
	for i := range enablements {
		if enablements[i].GroupVersion != apiVersion {
			continue
		}
		for _, r := range enablements[i].Resources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}
