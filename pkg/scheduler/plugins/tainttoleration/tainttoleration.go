// Package tainttoleration is the TaintToleration filter: a cluster with a
// NoSchedule or NoExecute taint that the placement's clusterTolerations do
// not tolerate is rejected, with corev1 toleration semantics. As in
// Karmada, a NoSchedule taint does not remove a cluster the binding is
// already scheduled to (NoSchedule keeps new work away; evicting existing
// work is what NoExecute and the taint manager are for).
package tainttoleration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "TaintToleration"

// TaintToleration filters clusters by their taints.
type TaintToleration struct{}

var _ framework.FilterPlugin = TaintToleration{}

// New builds the plugin.
func New() (framework.Plugin, error) { return TaintToleration{}, nil }

// Name returns the plugin name.
func (TaintToleration) Name() string { return Name }

// Filter rejects a cluster the binding is not scheduled to that has an
// untolerated NoSchedule or NoExecute taint; the reason names the first
// such taint.
func (TaintToleration) Filter(ctx context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	if len(cluster.Spec.Taints) == 0 || sc.PreviouslyScheduled(cluster.Name) {
		return nil
	}
	logger := klog.FromContext(ctx)
	for i := range cluster.Spec.Taints {
		taint := &cluster.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoExecute && taint.Effect != corev1.TaintEffectNoSchedule {
			continue
		}
		if !tolerated(logger, taint, sc.Placement.ClusterTolerations) {
			return framework.NewStatus(framework.Unschedulable,
				fmt.Sprintf("cluster(s) had untolerated taint {%s: %s}", keyValue(taint), taint.Effect))
		}
	}
	return nil
}

func tolerated(logger klog.Logger, taint *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logger, taint, false) {
			return true
		}
	}
	return false
}

func keyValue(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key
	}
	return t.Key + "=" + t.Value
}
