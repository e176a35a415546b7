package framework

import (
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// BindingView is what the scheduler sees of a ResourceBinding or a
// ClusterResourceBinding: both kinds share the spec and status types, so
// the view points at them instead of copying. Plugins treat Spec and
// Status as read-only.
type BindingView struct {
	// Kind is ResourceBinding or ClusterResourceBinding.
	Kind string
	// Namespace is empty for a ClusterResourceBinding.
	Namespace  string
	Name       string
	UID        types.UID
	Generation int64

	// Spec carries the inputs: resource (whose UID breaks Webster ties),
	// replicas, replicaRequirements, placement, clusters (the previous
	// result), gracefulEvictionTasks, rescheduleTriggeredAt.
	Spec *workv1alpha2.ResourceBindingSpec
	// Status carries the previous attempt's observations (affinity name,
	// lastScheduledTime). Never nil.
	Status *workv1alpha2.ResourceBindingStatus
}

// SchedulingContext is everything one scheduling attempt of one binding
// works on. The Framework builds one per attempt; plugins read it and must
// not modify it.
type SchedulingContext struct {
	Binding *BindingView

	// Placement is the binding's placement; an empty Placement when the
	// binding has none (all clusters, Duplicated). Never nil.
	Placement *policyv1alpha1.Placement

	// Clusters are all clusters of this attempt (the snapshot), sorted by
	// name.
	Clusters []*clusterv1alpha1.Cluster

	// ClusterAffinity is the affinity of this attempt: the placement's
	// clusterAffinity, or the clusterAffinities term named AffinityName.
	// nil selects every cluster.
	ClusterAffinity *policyv1alpha1.ClusterAffinity
	// AffinityName is the clusterAffinities term in use; empty when the
	// placement uses clusterAffinity or neither.
	AffinityName string

	// Tenant is the boundary of the tenant whose policy placed the
	// binding: no cluster outside it may be used, whatever the placement
	// selects. nil: a platform admin's policy, unbounded.
	Tenant *TenantBoundary

	// Workloads are the other workloads of the binding's workload
	// affinity groups (spec.workloadAffinityGroups) and where they run.
	// nil: the binding has no group.
	Workloads *WorkloadGroups

	previous      map[string]int32
	evicting      map[string]struct{}
	affinityStart int
}

// NewSchedulingContext builds the context of one attempt. clusters must be
// sorted by name (the controller and tests list them so).
//
// The attempt's affinity is the placement's clusterAffinity or, with
// clusterAffinities, the term the binding last observed
// (status.schedulerObservingAffinityName), as Karmada: a binding that fell
// to a later term stays there while it fits. A Fresh reschedule
// (rescheduleTriggeredAt after lastScheduledTime) and an observed name
// that is no longer in the list start from the first term. The Framework
// moves on to later terms when one cannot fit (see AffinityTerms).
func NewSchedulingContext(binding *BindingView, clusters []*clusterv1alpha1.Cluster) *SchedulingContext {
	if binding.Spec == nil {
		binding.Spec = &workv1alpha2.ResourceBindingSpec{}
	}
	if binding.Status == nil {
		binding.Status = &workv1alpha2.ResourceBindingStatus{}
	}
	placement := binding.Spec.Placement
	if placement == nil {
		placement = &policyv1alpha1.Placement{}
	}
	sc := &SchedulingContext{
		Binding:   binding,
		Placement: placement,
		Clusters:  clusters,
	}
	switch {
	case placement.ClusterAffinity != nil:
		sc.ClusterAffinity = placement.ClusterAffinity
	case len(placement.ClusterAffinities) > 0:
		if !sc.Fresh() {
			for i := range placement.ClusterAffinities {
				if placement.ClusterAffinities[i].AffinityName == binding.Status.SchedulerObservedAffinityName {
					sc.affinityStart = i
					break
				}
			}
		}
		sc.UseAffinityTerm(sc.affinityStart)
	}
	if n := len(binding.Spec.Clusters); n > 0 {
		sc.previous = make(map[string]int32, n)
		for _, tc := range binding.Spec.Clusters {
			sc.previous[tc.Name] = tc.Replicas
		}
	}
	if n := len(binding.Spec.GracefulEvictionTasks); n > 0 {
		sc.evicting = make(map[string]struct{}, n)
		for _, task := range binding.Spec.GracefulEvictionTasks {
			sc.evicting[task.FromCluster] = struct{}{}
		}
	}
	return sc
}

// PreviouslyScheduled reports whether cluster is in the binding's current
// result (spec.clusters).
func (sc *SchedulingContext) PreviouslyScheduled(cluster string) bool {
	_, ok := sc.previous[cluster]
	return ok
}

// Evicting reports whether the binding is being evicted from cluster (a
// graceful eviction task names it).
func (sc *SchedulingContext) Evicting(cluster string) bool {
	_, ok := sc.evicting[cluster]
	return ok
}

// Replicas is the binding's desired replica count.
func (sc *SchedulingContext) Replicas() int32 { return sc.Binding.Spec.Replicas }

// ResourceUID is the UID of the resource template; Webster ties are broken
// by its hash.
func (sc *SchedulingContext) ResourceUID() types.UID { return sc.Binding.Spec.Resource.UID }

// AffinityTerms returns the indexes of the clusterAffinities terms to try,
// in order: from the starting term (see NewSchedulingContext) to the last.
// Empty when the placement has no clusterAffinities (or uses
// clusterAffinity, which takes precedence).
func (sc *SchedulingContext) AffinityTerms() []int {
	if sc.Placement.ClusterAffinity != nil {
		return nil
	}
	var out []int
	for i := sc.affinityStart; i < len(sc.Placement.ClusterAffinities); i++ {
		out = append(out, i)
	}
	return out
}

// UseAffinityTerm makes clusterAffinities term i the attempt's affinity.
// Only the Framework calls it, between attempts of one binding.
func (sc *SchedulingContext) UseAffinityTerm(i int) {
	term := &sc.Placement.ClusterAffinities[i]
	sc.ClusterAffinity, sc.AffinityName = &term.ClusterAffinity, term.AffinityName
}

// Fresh reports Karmada's Fresh scheduling mode: rescheduleTriggeredAt is
// later than lastScheduledTime (both set), so the previous result is not
// a reference for division or affinity terms.
func (sc *SchedulingContext) Fresh() bool {
	t, last := sc.Binding.Spec.RescheduleTriggeredAt, sc.Binding.Status.LastScheduledTime
	return t != nil && last != nil && t.After(last.Time)
}

// PreviousReplicas is the binding's previous result (spec.clusters).
func (sc *SchedulingContext) PreviousReplicas() []workv1alpha2.TargetCluster {
	return sc.Binding.Spec.Clusters
}

// UsesAvailableReplicas reports whether the placement divides replicas by
// available replicas (Divided with dynamicWeight, or Aggregated), so
// resource summaries matter to it.
func UsesAvailableReplicas(p *policyv1alpha1.Placement) bool {
	if ReplicaSchedulingType(p) != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return false
	}
	return DivisionPreference(p) == policyv1alpha1.ReplicaDivisionPreferenceAggregated || !IsStaticWeighted(p)
}

// TenantBoundary is the cluster set a tenant's policy is held to
// (pkg/tenancy decides it; the framework only filters by it).
type TenantBoundary struct {
	// Tenant names the tenant; empty for a closed boundary, which allows
	// no cluster.
	Tenant string
	// Reason says why a closed boundary is closed.
	Reason string
	// Allows reports whether a cluster is in the set.
	Allows func(*clusterv1alpha1.Cluster) bool
}

// Excluded lists the clusters of the attempt the tenant boundary keeps
// the binding off, sorted (nil when unbounded).
func (sc *SchedulingContext) Excluded() []string {
	if sc.Tenant == nil {
		return nil
	}
	var out []string
	for _, c := range sc.Clusters {
		if !sc.Tenant.Allows(c) {
			out = append(out, c.Name)
		}
	}
	return out
}

// WorkloadGroups is where the other workloads of a binding's affinity
// groups (placement.workloadAffinity, resolved on the binding by the
// detector) are placed: the other bindings of the same namespace and
// group that have clusters. The controller reads them from its cache.
type WorkloadGroups struct {
	// AffinityGroup and AntiAffinityGroup are the binding's groups
	// ("<label key>=<value>"; empty: none).
	AffinityGroup, AntiAffinityGroup string
	// Affinity holds the cluster set of each placed workload of the
	// affinity group; a cluster must be in every one. Empty: the binding
	// is the group's first, and goes anywhere.
	Affinity []map[string]bool
	// AntiAffinity is the union of the clusters the placed workloads of
	// the anti-affinity group run on; no cluster of it may be used.
	AntiAffinity map[string]bool
}
