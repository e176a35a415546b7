package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/scheduler"
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
	ctrl.SetLogger(klog.NewKlogr())
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cp.RESTConfig(t), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// One manager per test in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := scheduler.Setup(ctx, mgr, scheduler.Options{Workers: 2}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return cp.Client(t)
}

// createCluster creates cluster and then writes its status through the
// status subresource, as the cluster controller would.
func createCluster(t *testing.T, c client.Client, cluster *clusterv1alpha1.Cluster) {
	t.Helper()
	ctx := framework.Context(t, timeout)
	status := cluster.Status.DeepCopy()
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatalf("creating cluster %s: %v", cluster.Name, err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), cluster); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting cluster %s: %v", cluster.Name, err)
		}
	})
	cluster.Status = *status
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatalf("writing status of cluster %s: %v", cluster.Name, err)
	}
}

// create creates a binding and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(framework.Context(t, timeout), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}

// update re-reads obj, applies mutate and updates it, retrying conflicts.
func update[T client.Object](t *testing.T, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	ctx := framework.Context(t, timeout)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("getting %s: %v", obj.GetName(), err)
		}
		mutate(obj)
		err := c.Update(ctx, obj)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("updating %s: %v", obj.GetName(), err)
		}
	}
}

func bindingState(obj client.Object) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &b.Spec, &b.Status
	case *workv1alpha2.ClusterResourceBinding:
		return &b.Spec, &b.Status
	}
	panic(fmt.Sprintf("not a binding: %T", obj))
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
		got := formatTargets(spec.Clusters)
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

// consistently fails when cond stops holding within d.
func consistently(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok, msg := cond(); !ok {
			t.Fatalf("%s no longer holds: %s", what, msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
