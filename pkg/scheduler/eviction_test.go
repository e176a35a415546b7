package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// TestRunEvictionTasks: what one attempt does with graceful eviction
// tasks — return to a recovered cluster (paced), keep a task whose cluster
// is still down, complete a task once the replacement is healthy.
func TestRunEvictionTasks(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fw, err := framework.New(plugins.NewInTreeRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	healthyCluster := func(name string) *clusterv1alpha1.Cluster {
		return utiltesting.MakeCluster(name).APIEnablement("apps/v1", "Deployment").Ready().Obj()
	}
	down := utiltesting.MakeCluster("m1").APIEnablement("apps/v1", "Deployment").
		Condition(clusterv1alpha1.ClusterConditionReady, metav1.ConditionUnknown, "ClusterNotReachable").
		Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).
		Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoExecute).Obj()
	healthy := []metav1.Condition{
		{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, ObservedGeneration: 2},
		{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2},
	}
	duplicated := func() *workv1alpha2.ResourceBinding {
		b := utiltesting.MakeBinding("web", "ns").Resource("apps/v1", "Deployment", "web").Replicas(2).
			Placement(utiltesting.MakePlacement().Duplicated().Obj()).
			TargetCluster("m2", 2).TargetCluster("m3", 2).EvictionTask("m1").Generation(2).Obj()
		b.Spec.GracefulEvictionTasks[0].PurgeMode = policyv1alpha1.PurgeModeGracefully
		b.Spec.GracefulEvictionTasks[0].CreationTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
		b.Status.Conditions = healthy
		for _, c := range []string{"m2", "m3"} {
			b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: c, Applied: true, Health: workv1alpha2.ResourceHealthy})
		}
		return b
	}
	newReconciler := func(limiter *eviction.Limiter) *reconciler {
		return &reconciler{kind: bindingkind.ResourceBinding{}, framework: fw, clock: clocktesting.NewFakePassiveClock(now),
			limiter: limiter, gracePeriod: eviction.DefaultGracePeriod, restored: &restoreTracker{seen: map[string]bool{}}}
	}

	t.Run("recovered cluster: returned in the same write, task dropped", func(t *testing.T) {
		r := newReconciler(eviction.NewLimiter(0, 0))
		a := r.run(context.Background(), duplicated(), []*clusterv1alpha1.Cluster{healthyCluster("m1"), healthyCluster("m2"), healthyCluster("m3")}, nil)
		if a.err != nil || !slices.Equal(a.returned, []string{"m1"}) || len(a.tasks) != 0 {
			t.Fatalf("returned %v, tasks %v, err %v; want a return to m1 and no task", a.returned, a.tasks, a.err)
		}
		if !slices.ContainsFunc(a.res.Clusters, func(tc workv1alpha2.TargetCluster) bool { return tc.Name == "m1" }) {
			t.Errorf("result %v does not include m1", a.res.Clusters)
		}
	})
	t.Run("returns are paced", func(t *testing.T) {
		limiter := eviction.NewLimiter(0.1, 1)
		limiter.Take(now)
		r := newReconciler(limiter)
		a := r.run(context.Background(), duplicated(), []*clusterv1alpha1.Cluster{healthyCluster("m1"), healthyCluster("m2"), healthyCluster("m3")}, nil)
		if len(a.returned) != 0 || a.requeue <= 0 {
			t.Fatalf("returned %v, requeue %s; want no return yet and a requeue", a.returned, a.requeue)
		}
		// The replacement is healthy, but the task waits for its turn: were
		// it completed, the copy would be purged and then put back.
		if a.tasksChanged() || len(a.tasks) != 1 {
			t.Fatalf("tasks %v, completed %v; want the task kept until a token is free", a.tasks, a.completed)
		}
	})
	t.Run("cluster still down: task kept though the replacement is healthy", func(t *testing.T) {
		r := newReconciler(eviction.NewLimiter(0, 0))
		a := r.run(context.Background(), duplicated(), []*clusterv1alpha1.Cluster{down, healthyCluster("m2"), healthyCluster("m3")}, nil)
		if a.tasksChanged() || len(a.tasks) != 1 {
			t.Fatalf("tasks %v, completed %v; want the task kept", a.tasks, a.completed)
		}
	})
	t.Run("dynamic weights stay where they moved: the recovered cluster's copy is purged", func(t *testing.T) {
		r := newReconciler(eviction.NewLimiter(0, 0))
		b := duplicated()
		b.Spec.Replicas = 3
		b.Spec.Placement = utiltesting.MakePlacement().DynamicWeight().Obj()
		b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 2}, {Name: "m3", Replicas: 1}}
		readyFor := func(name string, d time.Duration) *clusterv1alpha1.Cluster {
			c := utiltesting.MakeCluster(name).APIEnablement("apps/v1", "Deployment").Ready().
				ResourceSummary(map[corev1.ResourceName]string{"cpu": "8", "memory": "32Gi", "pods": "110"}, nil).Obj()
			c.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d))
			return c
		}
		// Just back: its status may still be catching up, so no purge yet.
		a := r.run(context.Background(), b, []*clusterv1alpha1.Cluster{readyFor("m1", 10*time.Second), readyFor("m2", time.Hour), readyFor("m3", time.Hour)}, nil)
		if a.err != nil || len(a.returned) != 0 || a.tasksChanged() || a.requeue != 50*time.Second {
			t.Fatalf("returned %v, completed %v, requeue %s, err %v; want the task kept 50s more", a.returned, a.completed, a.requeue, a.err)
		}
		// Settled, and the placement still does not take it back: purged.
		a = r.run(context.Background(), b, []*clusterv1alpha1.Cluster{readyFor("m1", 2*time.Minute), readyFor("m2", time.Hour), readyFor("m3", time.Hour)}, nil)
		if a.err != nil || len(a.returned) != 0 || len(a.completed) != 1 || len(a.tasks) != 0 {
			t.Fatalf("returned %v, completed %v, tasks %v, err %v; want no return and the task completed", a.returned, a.completed, a.tasks, a.err)
		}
	})
	t.Run("application failure: completed once the replacement is healthy, no return", func(t *testing.T) {
		r := newReconciler(eviction.NewLimiter(0, 0))
		b := duplicated()
		b.Spec.Placement = utiltesting.MakePlacement().ClusterNames("m1", "m2", "m3").
			SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 1).Obj()
		b.Spec.Clusters = b.Spec.Clusters[:1]
		b.Status.AggregatedStatus = b.Status.AggregatedStatus[:1]
		b.Spec.GracefulEvictionTasks[0].Producer = workv1alpha2.EvictionProducerApplicationFailover
		a := r.run(context.Background(), b, []*clusterv1alpha1.Cluster{healthyCluster("m1"), healthyCluster("m2"), healthyCluster("m3")}, nil)
		if a.err != nil || len(a.returned) != 0 || len(a.completed) != 1 || len(a.tasks) != 0 {
			t.Fatalf("returned %v, completed %v, tasks %v, err %v; want the task completed", a.returned, a.completed, a.tasks, a.err)
		}
	})
}
