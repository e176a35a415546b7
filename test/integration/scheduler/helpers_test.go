package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

const (
	namespace = "default"
	timeout   = 30 * time.Second
)

// startScheduler runs the scheduler in an in-process manager against the
// control plane until the test ends, and returns a direct (uncached)
// client for the test's own reads and writes.
func startScheduler(t *testing.T) client.Client {
	t.Helper()
	framework.StartManager(t, cp.RESTConfig(t), func(ctx context.Context, mgr ctrl.Manager) error {
		return scheduler.Setup(ctx, mgr, scheduler.Options{Workers: 2})
	})
	return cp.Client(t)
}

// readyCluster is a Ready cluster serving Deployments and Namespaces.
func readyCluster(name string) *utiltesting.ClusterWrapper {
	return utiltesting.MakeCluster(name).Ready().
		APIEnablement("v1", "ConfigMap", "Namespace").
		APIEnablement("apps/v1", "Deployment")
}

// createCluster creates cluster, deleted again when the test ends, and then
// writes its status through the status subresource, as the cluster
// controller would.
func createCluster(t *testing.T, c client.Client, cluster *clusterv1alpha1.Cluster) {
	t.Helper()
	status := cluster.Status.DeepCopy()
	framework.CreateAndCleanup(t, c, cluster)
	cluster.Status = *status
	if err := c.Status().Update(framework.Context(t, timeout), cluster); err != nil {
		t.Fatalf("writing status of cluster %s: %v", cluster.Name, err)
	}
}

// bindingState is the spec and status of a binding of either kind.
func bindingState(obj client.Object) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	_, spec, status := bindingkind.Parts(obj)
	return spec, status
}

func formatTargets(ts []workv1alpha2.TargetCluster) string {
	parts := make([]string, len(ts))
	for i, tc := range ts {
		parts[i] = fmt.Sprintf("%s:%d", tc.Name, tc.Replicas)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// waitScheduled waits until obj is scheduled (Scheduled=True for its
// current generation) to exactly want ("name:replicas …").
func waitScheduled(t *testing.T, c client.Client, obj client.Object, want string) {
	t.Helper()
	ctx := framework.Context(t, timeout)
	framework.Eventually(t, timeout, obj.GetName()+" scheduled to "+want, func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		spec, status := bindingState(obj)
		cond := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled)
		// The scheduler's latest result: spec.clusters, or the target it
		// handed to a gradual move (rebalance.TargetAnnotation).
		got := formatTargets(spec.Clusters)
		if v, ok := obj.GetAnnotations()[rebalance.TargetAnnotation]; ok {
			ts, err := rebalance.DecodeTarget(v)
			if err != nil {
				return false, err.Error()
			}
			got = formatTargets(ts)
		}
		msg := fmt.Sprintf("clusters %q, observed generation %d of %d, condition %+v", got, status.SchedulerObservedGeneration, obj.GetGeneration(), cond)
		return got == want && status.SchedulerObservedGeneration == obj.GetGeneration() &&
			cond != nil && cond.Status == "True" && cond.Reason == workv1alpha2.BindingReasonSuccess &&
			cond.ObservedGeneration == obj.GetGeneration() && status.LastScheduledTime != nil, msg
	})
}

// waitUnschedulable waits for Scheduled=False with reason and message.
func waitUnschedulable(t *testing.T, c client.Client, obj client.Object, reason, message string) {
	t.Helper()
	ctx := framework.Context(t, timeout)
	framework.Eventually(t, timeout, obj.GetName()+" unschedulable", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		_, status := bindingState(obj)
		cond := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled)
		if cond == nil {
			return false, "no Scheduled condition"
		}
		return cond.Status == "False" && cond.Reason == reason && cond.Message == message &&
			status.SchedulerObservedGeneration == obj.GetGeneration(), fmt.Sprintf("condition %+v", cond)
	})
}

// withHandoff runs the scheduler with a status hand-off that no executor
// takes (a part waits 3 s once taken up, 6 s while queued), and creates
// Ready cluster NAME-1 and the binding of Deployment NAME, two replicas,
// placed on it.
func withHandoff(t *testing.T, name string) (client.Client, *bindingkind.Handoff, *workv1alpha2.ResourceBinding) {
	handoff := bindingkind.NewHandoff(3*time.Second, 6*time.Second)
	framework.StartManager(t, cp.RESTConfig(t), func(ctx context.Context, mgr ctrl.Manager) error {
		return scheduler.Setup(ctx, mgr, scheduler.Options{Workers: 2, Handoff: handoff})
	})
	c := cp.Client(t)
	createCluster(t, c, readyCluster(name+"-1").Obj())
	rb := utiltesting.MakeBinding(name+"-deployment", namespace).Resource("apps/v1", "Deployment", name).
		Replicas(2).Placement(utiltesting.MakePlacement().ClusterNames(name + "-1").Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	return c, handoff, rb
}
