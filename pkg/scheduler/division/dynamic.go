package division

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// AvailableReplicas estimates how many more replicas of a workload fit in
// cluster, from its status.resourceSummary, as Karmada's general estimator
// does: for every requested resource, (allocatable − allocated −
// allocating) / request (CPU in millicores), the minimum over the
// resources, also bounded by the free pod count when the summary lists
// pods. A cluster without a summary has 0. Without requests (and without a
// pod bound) the estimate is unbounded; as in Karmada, an unbounded
// (MaxInt32) estimate is capped at replicas.
func AvailableReplicas(cluster *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements, replicas int32) int32 {
	summary := cluster.Status.ResourceSummary
	if summary == nil {
		return 0
	}
	est := int64(math.MaxInt32)
	if _, ok := summary.Allocatable[corev1.ResourcePods]; ok {
		est = min(est, free(summary, corev1.ResourcePods, false))
	}
	if req != nil {
		for name, q := range req.ResourceRequest {
			milli := name == corev1.ResourceCPU
			want := q.Value()
			if milli {
				want = q.MilliValue()
			}
			if want <= 0 {
				continue
			}
			est = min(est, free(summary, name, milli)/want)
		}
	}
	est = max(est, 0)
	if est >= math.MaxInt32 {
		return replicas
	}
	return int32(est)
}

// free is allocatable − allocated − allocating of one resource.
func free(s *clusterv1alpha1.ResourceSummary, name corev1.ResourceName, milli bool) int64 {
	val := func(l corev1.ResourceList) int64 {
		q, ok := l[name]
		if !ok {
			return 0
		}
		if milli {
			return q.MilliValue()
		}
		return q.Value()
	}
	return val(s.Allocatable) - val(s.Allocated) - val(s.Allocating)
}

// ClusterAvailable is a candidate cluster with its estimated available
// replicas (AvailableReplicas).
type ClusterAvailable struct {
	Name      string
	Available int32
}

// DynamicInput is one dynamic division (Divided with dynamicWeight or
// Aggregated), Karmada's assignByDynamicStrategy.
type DynamicInput struct {
	// Replicas is spec.replicas.
	Replicas int32
	// Candidates are the selected clusters with their available replicas.
	Candidates []ClusterAvailable
	// Previous is the previous result (spec.clusters); entries for clusters
	// that are not candidates any more are ignored.
	Previous []workv1alpha2.TargetCluster
	// Fresh ignores the previous result (rescheduleTriggeredAt after
	// lastScheduledTime, see IsFresh); otherwise the division is Steady.
	Fresh bool
	// Aggregated uses the fewest clusters that fit, clusters already
	// holding replicas first; otherwise every candidate is weighted by its
	// available replicas.
	Aggregated bool
	// UID is the resource template's UID (Webster tie-breaks).
	UID types.UID
}

// InsufficientError says that the candidates cannot hold the replicas.
type InsufficientError struct {
	Available, Needed int64
}

func (e *InsufficientError) Error() string {
	return fmt.Sprintf("clusters have %d available replicas in total, %d needed", e.Available, e.Needed)
}

// IsFresh reports Karmada's Fresh mode (util.RescheduleRequired):
// rescheduleTriggeredAt is set and later than lastScheduledTime, which
// must be set.
func IsFresh(rescheduleTriggeredAt, lastScheduledTime *metav1.Time) bool {
	return rescheduleTriggeredAt != nil && lastScheduledTime != nil &&
		rescheduleTriggeredAt.After(lastScheduledTime.Time)
}

// Dynamic divides replicas by available replicas, exactly as Karmada
// v1.16+'s assignByDynamicStrategy:
//
//   - Fresh: weights are available + currently assigned replicas, the
//     target is all replicas, the previous result is ignored.
//   - Steady, assigned = desired: the previous result, unchanged.
//   - Steady, assigned > desired (scale down): weights are the previous
//     per-cluster replicas, the target is desired, so replicas shrink in
//     proportion to the previous result.
//   - Steady, assigned < desired (scale up, first schedule): weights are
//     the available replicas, the target is desired − assigned, and the
//     result is added onto the previous one.
//
// Weights are sorted by value descending (then name). With Sum(weights) <
// target it returns an *InsufficientError. Aggregated keeps the clusters
// already holding replicas first (in that order) and then the shortest
// prefix whose weights reach the target. The target is divided over the
// weights by Webster (SpreadReplicasByTargetClusters). The result is
// sorted by name and holds no 0-replica clusters.
func Dynamic(in DynamicInput) ([]workv1alpha2.TargetCluster, error) {
	candidates := make(map[string]int32, len(in.Candidates))
	for _, c := range in.Candidates {
		candidates[c.Name] = c.Available
	}
	scheduled := map[string]int32{}
	var assigned int64
	for _, tc := range in.Previous {
		if _, ok := candidates[tc.Name]; ok && tc.Replicas > 0 {
			scheduled[tc.Name] += tc.Replicas
			assigned += int64(tc.Replicas)
		}
	}
	desired := int64(in.Replicas)

	var weights []ClusterWeight
	var target int64
	var base map[string]int32
	switch {
	case in.Fresh:
		for _, c := range in.Candidates {
			weights = append(weights, ClusterWeight{Name: c.Name, Weight: int64(c.Available) + int64(scheduled[c.Name])})
		}
		target = desired
	case assigned == desired:
		return sorted(scheduled), nil
	case assigned > desired:
		for name, r := range scheduled {
			weights = append(weights, ClusterWeight{Name: name, Weight: int64(r)})
		}
		target = desired
	default:
		for _, c := range in.Candidates {
			weights = append(weights, ClusterWeight{Name: c.Name, Weight: int64(c.Available)})
		}
		target = desired - assigned
		base = scheduled
	}
	slices.SortFunc(weights, func(a, b ClusterWeight) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var sum int64
	for _, w := range weights {
		sum += w.Weight
	}
	if sum < target {
		return nil, &InsufficientError{Available: sum, Needed: target}
	}
	if in.Aggregated {
		// resortAvailableClusters: clusters holding replicas first, keeping
		// their relative order.
		held := func(w ClusterWeight) bool { return scheduled[w.Name] > 0 }
		front := make([]ClusterWeight, 0, len(weights))
		var back []ClusterWeight
		for _, w := range weights {
			if held(w) {
				front = append(front, w)
			} else {
				back = append(back, w)
			}
		}
		weights = append(front, back...)
		var cum int64
		for i, w := range weights {
			if cum += w.Weight; cum >= target {
				weights = weights[:i+1]
				break
			}
		}
	}
	out := map[string]int32{}
	for name, r := range base {
		out[name] = r
	}
	for _, tc := range Webster(int32(target), weights, NameOrderForUID(in.UID)) {
		out[tc.Name] += tc.Replicas
	}
	return sorted(out), nil
}

// sorted turns a name → replicas map into a result sorted by name, without
// 0-replica clusters.
func sorted(m map[string]int32) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(m))
	for name, r := range m {
		if r > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: name, Replicas: r})
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ComponentsFit reports whether all of a multi-component workload's
// replicas (every component's replicas × its request, and one pod each)
// fit in cluster's free resources at once, from its resourceSummary, as
// Karmada's estimator answers for a multi-component workload placed on one
// cluster. A cluster without a summary does not fit (nothing is known to
// be free). It returns the first resource that does not fit.
func ComponentsFit(cluster *clusterv1alpha1.Cluster, components []workv1alpha2.Component) (bool, corev1.ResourceName) {
	summary := cluster.Status.ResourceSummary
	if summary == nil {
		return false, "resourceSummary"
	}
	want := map[corev1.ResourceName]int64{}
	var pods int64
	for _, c := range components {
		pods += int64(c.Replicas)
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			v := q.Value()
			if name == corev1.ResourceCPU {
				v = q.MilliValue()
			}
			want[name] += v * int64(c.Replicas)
		}
	}
	if _, ok := summary.Allocatable[corev1.ResourcePods]; ok && pods > free(summary, corev1.ResourcePods, false) {
		return false, corev1.ResourcePods
	}
	names := make([]corev1.ResourceName, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if want[name] > free(summary, name, name == corev1.ResourceCPU) {
			return false, name
		}
	}
	return true, ""
}
