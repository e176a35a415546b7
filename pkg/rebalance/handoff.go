package rebalance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// TargetAnnotation on a ResourceBinding holds the scheduler's latest result
// (spec.clusters as JSON) while a move is gradual: the scheduler writes it
// instead of spec.clusters, and the rebalance controller moves
// spec.clusters toward it step by step.
const TargetAnnotation = "apps.atoll.dev/rebalance-target"

// ModeAnnotation on a PropagationPolicy or ClusterPropagationPolicy with
// the value ModeImmediate turns gradual moves off for the workloads it
// claims: a weight change re-divides at once, as in Karmada.
const ModeAnnotation = "apps.atoll.dev/rebalance"

// ModeImmediate is the ModeAnnotation value that opts out.
const ModeImmediate = "Immediate"

// Annotate sets one of the rebalance annotations on obj, or removes it for
// "" (the scheduler and the rebalance controller write them through it).
func Annotate(obj metav1.Object, key, value string) {
	a := obj.GetAnnotations()
	if value == "" {
		delete(a, key)
	} else {
		if a == nil {
			a = map[string]string{}
		}
		a[key] = value
	}
	obj.SetAnnotations(a)
}

// EncodeTarget is the TargetAnnotation value of a scheduling result.
func EncodeTarget(ts []workv1alpha2.TargetCluster) string {
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	b, _ := json.Marshal(sorted) // plain structs always encode
	return string(b)
}

// DecodeTarget reads a TargetAnnotation value.
func DecodeTarget(v string) ([]workv1alpha2.TargetCluster, error) {
	var ts []workv1alpha2.TargetCluster
	if err := json.Unmarshal([]byte(v), &ts); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", TargetAnnotation, err)
	}
	return ts, nil
}

// Gradual decides how the scheduler hands over a new result next for a
// binding running cur: gradually (through the TargetAnnotation) when a
// Divided result moves replicas between clusters, or when a move is already under
// way (hasTarget); at once otherwise. Failover wins: a binding with eviction
// tasks (failover evicting it from a cluster), or one whose participating
// cluster is gone, is rescheduled at once.
func Gradual(cur, next Distribution, hasTarget, optedOut bool, spec *workv1alpha2.ResourceBindingSpec, clusters []*clusterv1alpha1.Cluster) bool {
	if optedOut || spec.Replicas == 0 || len(spec.GracefulEvictionTasks) > 0 || next.Total() == 0 || !Divided(spec.Placement) {
		return false
	}
	if !hasTarget && !IsMove(cur, next) {
		return false
	}
	for _, name := range Union(cur, next) {
		if failingOver(find(clusters, name)) {
			return false
		}
	}
	return true
}

// failingOver reports a cluster that is gone. (Failover itself shows as
// the binding's eviction tasks.) A cluster that is merely not Ready, or
// tainted but tolerated, stays in the move, which pauses until it is Ready
// again.
func failingOver(c *clusterv1alpha1.Cluster) bool {
	return c == nil
}

// Divided reports a placement that divides replicas over clusters (where
// weights mean something); Duplicated placements copy the whole workload
// to each cluster and are placed at once.
func Divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil &&
		p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// Healthy reports whether a cluster can take part in a move: it exists, is
// Ready and has no NoExecute taint.
func Healthy(c *clusterv1alpha1.Cluster) bool {
	if c == nil || !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return false
	}
	for _, t := range c.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return true
}

func find(clusters []*clusterv1alpha1.Cluster, name string) *clusterv1alpha1.Cluster {
	for _, c := range clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}
