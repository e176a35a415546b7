// Package eviction is the graceful eviction machinery shared by failover
// (which starts evictions) and the scheduler (which finishes them): how an
// eviction changes a binding's spec, when a cluster counts as healthy
// again, when a replacement counts as healthy, and what becomes of each
// task. It holds no state and talks to no API server.
//
// A task's life (docs/failover.md):
//
//	started   failover removes the cluster from spec.clusters and records a
//	          task in spec.gracefulEvictionTasks (one write).
//	returned  a TaintManager task whose cluster is healthy again, and which
//	          the placement would use again, is dropped in the same write
//	          that puts the cluster back: the copy there is reconciled, not
//	          deleted and recreated.
//	purged    the executor deletes the old copy: Directly at once (the
//	          task stays), Gracefully once the task is gone, Never only
//	          by hand.
//	completed the task is dropped once the replacement is healthy, or the
//	          grace period passed while the binding is scheduled elsewhere
//	          (a Directly task's copy is gone already: it completes then
//	          even when the binding is scheduled nowhere). Until then the
//	          scheduler leaves the task's cluster out. A task whose cluster
//	          cannot be reached is kept: its copy cannot be purged anyway,
//	          and keeping the task lets the cluster be reconciled by policy
//	          when it returns.
package eviction

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// DefaultGracePeriod is how long a Gracefully task waits at most for the
// replacement when neither the task nor the controller says otherwise
// (Karmada's --graceful-eviction-timeout).
const DefaultGracePeriod = 10 * time.Minute

// Request describes one eviction of a binding from a cluster.
type Request struct {
	Cluster   string
	PurgeMode policyv1alpha1.PurgeMode
	Reason    string
	Producer  string
	Message   string
	// GracePeriodSeconds bounds a Gracefully purge; nil uses the
	// controller's default.
	GracePeriodSeconds *int32
	// PreservedLabelState is the state read from the evicted copy
	// (PreservedState), for its replacement.
	PreservedLabelState map[string]string
}

// Evict removes req.Cluster from spec.clusters and records a graceful
// eviction task for it (replacing an older task for the same cluster).
// It reports false, and changes nothing, when the binding is not
// scheduled to the cluster.
func Evict(spec *workv1alpha2.ResourceBindingSpec, req Request, now time.Time) bool {
	i := slices.IndexFunc(spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == req.Cluster })
	if i < 0 {
		return false
	}
	before := make([]string, 0, len(spec.Clusters))
	for _, t := range spec.Clusters {
		before = append(before, t.Name)
	}
	task := workv1alpha2.GracefulEvictionTask{
		FromCluster:            req.Cluster,
		PurgeMode:              policyv1alpha1.NormalizePurgeMode(req.PurgeMode),
		Reason:                 req.Reason,
		Producer:               req.Producer,
		Message:                req.Message,
		CreationTimestamp:      &metav1.Time{Time: now.UTC().Truncate(time.Second)},
		ClustersBeforeFailover: before,
		PreservedLabelState:    req.PreservedLabelState,
	}
	if task.PurgeMode == "" {
		task.PurgeMode = policyv1alpha1.PurgeModeGracefully
	}
	if task.PurgeMode == policyv1alpha1.PurgeModeGracefully {
		task.GracePeriodSeconds = req.GracePeriodSeconds
	}
	if spec.Replicas > 0 {
		n := spec.Clusters[i].Replicas
		task.Replicas = &n
	}
	spec.Clusters = slices.Delete(spec.Clusters, i, i+1)
	spec.GracefulEvictionTasks = slices.DeleteFunc(spec.GracefulEvictionTasks, func(t workv1alpha2.GracefulEvictionTask) bool {
		return t.FromCluster == req.Cluster
	})
	spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
	return true
}

// ClusterHealthy reports whether a cluster is back to normal: Ready and
// without a NoExecute taint (atoll's own not-ready/unreachable, or one an
// operator added).
func ClusterHealthy(c *clusterv1alpha1.Cluster) bool {
	if c == nil || !c.DeletionTimestamp.IsZero() || !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return false
	}
	return !slices.ContainsFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute })
}

// ClusterReachable reports whether the copy on a cluster can be purged
// now: the cluster is Ready (taints do not matter for deleting).
func ClusterReachable(c *clusterv1alpha1.Cluster) bool {
	return c != nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// ReplacementHealthy reports whether the binding runs healthily where it
// is scheduled now: the scheduler and the executor have both handled the
// current generation, and every scheduled cluster reports the resource
// applied and Healthy. A binding scheduled nowhere has no replacement
// (Karmada #7455 took the vacuous "all of none are healthy" as done and
// deleted the last copy).
func ReplacementHealthy(generation int64, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	if !Placed(generation, spec, status) {
		return false
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.FullyApplied); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration < generation {
		return false
	}
	for _, t := range spec.Clusters {
		i := slices.IndexFunc(status.AggregatedStatus, func(it workv1alpha2.AggregatedStatusItem) bool { return it.ClusterName == t.Name })
		if i < 0 || !status.AggregatedStatus[i].Applied || status.AggregatedStatus[i].Health != workv1alpha2.ResourceHealthy {
			return false
		}
	}
	return true
}

// Placed reports whether the scheduler has placed the current generation
// somewhere: Scheduled=True for it, and a non-empty result that carries
// the replicas.
func Placed(generation int64, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	if len(spec.Clusters) == 0 {
		return false
	}
	var placed int32
	for _, t := range spec.Clusters {
		placed += t.Replicas
	}
	if spec.Replicas > 0 && placed == 0 {
		return false
	}
	c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= generation
}

// Holds reports whether the executor must keep the copy on a cluster that
// a task names (neither update nor delete it): Gracefully and Never keep
// it until the task is gone, Directly does not.
func Holds(task *workv1alpha2.GracefulEvictionTask) bool {
	if task.SuppressDeletion != nil && *task.SuppressDeletion {
		return true
	}
	return policyv1alpha1.NormalizePurgeMode(task.PurgeMode) != policyv1alpha1.PurgeModeDirectly
}

// Decision is what becomes of a task now.
type Decision int

const (
	// Keep the task (wait is when to look again; 0 means on the next
	// change).
	Keep Decision = iota
	// Complete drops the task; the executor purges the old copy.
	Complete
)

// ReturnSettle is how long a cluster that came back must have been Ready
// before the old copy of a cluster-failover task is purged because the
// placement did not take the cluster back. Returns themselves do not wait.
const ReturnSettle = time.Minute

func readySince(c *clusterv1alpha1.Cluster) time.Time {
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}

// Binding is what Assess needs to know of the binding.
type Binding struct {
	// Placed is Placed for the binding.
	Placed bool
	// Healthy is ReplacementHealthy for the binding.
	Healthy bool
}

// Assess decides a task's fate by its purge mode. cluster is the task's
// cluster (nil when it no longer exists). A Gracefully task whose grace
// period has passed completes only if the binding is placed elsewhere: the
// last copy is never purged for a replacement that does not exist.
// Returning a task to its cluster is decided before this, by the scheduler
// (Returnable).
func Assess(task *workv1alpha2.GracefulEvictionTask, cluster *clusterv1alpha1.Cluster, b Binding, defaultGrace time.Duration, now time.Time) (Decision, time.Duration) {
	if cluster == nil {
		return Complete, 0 // the cluster left the federation: nothing to purge
	}
	if task.SuppressDeletion != nil && *task.SuppressDeletion {
		return Keep, 0
	}
	mode := policyv1alpha1.NormalizePurgeMode(task.PurgeMode)
	if mode == policyv1alpha1.PurgeModeNever {
		return Keep, 0
	}
	if !ClusterReachable(cluster) {
		return Keep, 0 // purging must wait for the cluster; so does the task
	}
	if task.Producer == workv1alpha2.EvictionProducerTaintManager {
		if !ClusterHealthy(cluster) {
			// Ready again but still tainted: the taints go in the next
			// write. Whether the binding goes back there (Returnable) is
			// decided once they are gone; purging now would delete a copy
			// about to be wanted.
			return Keep, 0
		}
		if left := ReturnSettle - now.Sub(readySince(cluster)); left > 0 {
			// Just back: its status (nodes, resource summary) is still
			// catching up, so "the placement does not want it" may only
			// mean "not yet". The scheduler keeps trying to return it.
			return Keep, left
		}
	}
	if b.Healthy {
		return Complete, 0
	}
	// Every task stays until the replacement is healthy or the grace period
	// passed, as Karmada keeps them, whatever the purge mode: a Directly
	// task's copy is purged at once (Holds), but while the task exists the
	// scheduler leaves its cluster out, so a replacement that is slow to
	// turn healthy is not moved straight back to the cluster it was evicted
	// from (with tolerationSeconds shorter than a copy's start, the
	// workload would move between two clusters every tolerationSeconds),
	// and a replacement starts with the state's labels when the task
	// carries preserved state.
	grace := defaultGrace
	if task.GracePeriodSeconds != nil {
		grace = time.Duration(*task.GracePeriodSeconds) * time.Second
	}
	if task.CreationTimestamp == nil {
		return Keep, grace
	}
	if left := task.CreationTimestamp.Add(grace).Sub(now); left > 0 {
		return Keep, left
	}
	if !b.Placed && mode != policyv1alpha1.PurgeModeDirectly {
		// The old copy is the only one: it stays until there is a
		// replacement. A Directly task's copy is gone already, and keeping
		// the task would only keep its cluster out of a placement that has
		// nowhere else to go.
		return Keep, 0
	}
	return Complete, 0
}

// Returnable reports whether the binding may go back to the task's
// cluster: the task came from a cluster failure (not from the application
// failing there) and the cluster is healthy again.
func Returnable(task *workv1alpha2.GracefulEvictionTask, cluster *clusterv1alpha1.Cluster) bool {
	return task.Producer == workv1alpha2.EvictionProducerTaintManager && ClusterHealthy(cluster)
}
