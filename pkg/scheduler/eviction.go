package scheduler

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// The scheduler owns spec.clusters, so it also finishes graceful eviction
// tasks (failover only starts them): a task that goes back to its
// recovered cluster is dropped in the same write that puts the cluster
// back, so the executor never sees the cluster without a task and outside
// the placement in between, and never deletes a copy that is about to be
// wanted again (Karmada #5150).

// attempt is one scheduling attempt's outcome, before it is written.
type attempt struct {
	sc       *framework.SchedulingContext
	res      *framework.Result
	err      error
	tasks    []workv1alpha2.GracefulEvictionTask
	returned []string
	// completed are the tasks dropped because they are done.
	completed []workv1alpha2.GracefulEvictionTask
	// requeue asks for another attempt after this long (0: none).
	requeue time.Duration
}

// run schedules obj, trying first to return it to clusters it was evicted
// from that are healthy again, then assesses the remaining tasks.
func (r *reconciler) run(ctx context.Context, obj client.Object, clusters []*clusterv1alpha1.Cluster, workloads *framework.WorkloadGroups) *attempt {
	spec, status := r.kind.Spec(obj), r.kind.Status(obj)
	byName := make(map[string]*clusterv1alpha1.Cluster, len(clusters))
	for _, c := range clusters {
		byName[c.Name] = c
	}
	a := &attempt{tasks: spec.GracefulEvictionTasks}
	tenant := tenantBoundary(ctx, r.client, obj, spec)

	// returnable: tasks whose cluster is healthy again; waiting: those of
	// them the placement wants back but the bucket has no token for yet —
	// they must stay until their turn, not complete (which would purge a
	// copy the next attempt puts back).
	var returnable, waiting []string
	for i := range spec.GracefulEvictionTasks {
		if t := &spec.GracefulEvictionTasks[i]; eviction.Returnable(t, byName[t.FromCluster]) {
			returnable = append(returnable, t.FromCluster)
		}
	}
	if len(returnable) > 0 {
		trial := *spec
		trial.GracefulEvictionTasks = slices.DeleteFunc(slices.Clone(spec.GracefulEvictionTasks), func(t workv1alpha2.GracefulEvictionTask) bool {
			return slices.Contains(returnable, t.FromCluster)
		})
		sc := newContext(r.kind.Kind(), obj, &trial, status, clusters, tenant, workloads)
		res, err := r.framework.Schedule(ctx, sc)
		if err == nil {
			var back []string
			for _, t := range res.Clusters {
				if slices.Contains(returnable, t.Name) {
					back = append(back, t.Name)
				}
			}
			if len(back) > 0 {
				ok, wait := r.limiter.Take(r.clock.Now())
				if ok {
					a.sc, a.res, a.returned = sc, res, back
					a.tasks = slices.DeleteFunc(slices.Clone(spec.GracefulEvictionTasks), func(t workv1alpha2.GracefulEvictionTask) bool {
						return slices.Contains(back, t.FromCluster)
					})
					return a
				}
				a.requeue = wait // returns are paced fleet-wide
				waiting = back
			}
		}
	}

	a.sc = newContext(r.kind.Kind(), obj, spec, status, clusters, tenant, workloads)
	a.res, a.err = r.framework.Schedule(ctx, a.sc)
	if len(spec.GracefulEvictionTasks) == 0 || (a.err == nil && !sameTargets(spec.Clusters, a.res.Clusters)) {
		return a // tasks are judged against a result that has been applied
	}
	gen := obj.GetGeneration()
	state := eviction.Binding{
		Placed:  eviction.Placed(gen, spec, status),
		Healthy: eviction.ReplacementHealthy(gen, spec, status),
	}
	now := r.clock.Now()
	a.tasks = nil
	for i := range spec.GracefulEvictionTasks {
		t := &spec.GracefulEvictionTasks[i]
		if state.Healthy {
			r.restored.observe(obj, t, byName[t.FromCluster], now)
		}
		d, wait := eviction.Assess(t, byName[t.FromCluster], state, r.gracePeriod, now)
		if slices.Contains(waiting, t.FromCluster) {
			d, wait = eviction.Keep, 0
		}
		if d == eviction.Complete {
			a.completed = append(a.completed, *t)
			r.restored.forget(obj, t)
			continue
		}
		a.tasks = append(a.tasks, *t)
		if wait > 0 && (a.requeue == 0 || wait < a.requeue) {
			a.requeue = wait
		}
	}
	return a
}

// tasksChanged reports whether the attempt changes spec.gracefulEvictionTasks.
func (a *attempt) tasksChanged() bool { return len(a.returned) > 0 || len(a.completed) > 0 }

// recordTaskEvents tells, on the binding, which tasks ended and how.
func (r *reconciler) recordTaskEvents(obj client.Object, a *attempt) {
	for _, c := range a.returned {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "ReturnedToCluster", "Schedule",
			"Cluster %s is healthy again and the placement uses it: eviction task dropped, the copy there is reconciled", c)
	}
	for _, t := range a.completed {
		what := "the old copy is purged"
		if t.PurgeMode == "Directly" {
			what = "the old copy was purged directly"
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "EvictionCompleted", "Schedule",
			"Eviction from cluster %s (%s) completed: %s", t.FromCluster, t.Reason, what)
	}
}

// restoreTracker observes, once per task, the time from the failure to a
// healthy replacement.
type restoreTracker struct {
	mu   sync.Mutex
	seen map[string]bool
}

func taskKey(obj client.Object, t *workv1alpha2.GracefulEvictionTask) string {
	created := ""
	if t.CreationTimestamp != nil {
		created = t.CreationTimestamp.UTC().Format(time.RFC3339)
	}
	return strings.Join([]string{string(obj.GetUID()), t.FromCluster, created}, "/")
}

// observe records the restore time of t the first time its binding is
// healthy elsewhere. The failure is dated by the cluster's Ready
// transition for cluster failures, by the task otherwise.
func (rt *restoreTracker) observe(obj client.Object, t *workv1alpha2.GracefulEvictionTask, cluster *clusterv1alpha1.Cluster, now time.Time) {
	key := taskKey(obj, t)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.seen[key] || t.CreationTimestamp == nil {
		return
	}
	rt.seen[key] = true
	since := t.CreationTimestamp.Time
	if cluster != nil && t.Producer == workv1alpha2.EvictionProducerTaintManager {
		if c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil && c.Status != metav1.ConditionTrue && c.LastTransitionTime.Time.Before(t.CreationTimestamp.Time) {
			since = c.LastTransitionTime.Time
		}
	}
	eviction.ObserveRestore(t.Producer, now.Sub(since))
}

func (rt *restoreTracker) forget(obj client.Object, t *workv1alpha2.GracefulEvictionTask) {
	rt.mu.Lock()
	delete(rt.seen, taskKey(obj, t))
	rt.mu.Unlock()
}
