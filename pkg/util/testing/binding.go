package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// BindingWrapper builds a ResourceBinding (or, with ClusterObj, a
// ClusterResourceBinding with the same spec).
type BindingWrapper struct{ workv1alpha2.ResourceBinding }

// MakeBinding starts a ResourceBinding namespace/name for an apps/v1
// Deployment of the same name.
func MakeBinding(name, namespace string) *BindingWrapper {
	return &BindingWrapper{workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: namespace, Name: name},
		},
	}}
}

// Obj returns a copy of the built ResourceBinding.
func (w *BindingWrapper) Obj() *workv1alpha2.ResourceBinding { return w.DeepCopy() }

// ClusterObj returns a ClusterResourceBinding with the built name, labels,
// spec and status.
func (w *BindingWrapper) ClusterObj() *workv1alpha2.ClusterResourceBinding {
	rb := w.DeepCopy()
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: rb.ObjectMeta, Spec: rb.Spec, Status: rb.Status}
	crb.Namespace = ""
	crb.Spec.Resource.Namespace = ""
	return crb
}

// Resource sets the resource reference (namespace: the binding's).
func (w *BindingWrapper) Resource(apiVersion, kind, name string) *BindingWrapper {
	w.Spec.Resource.APIVersion, w.Spec.Resource.Kind, w.Spec.Resource.Name = apiVersion, kind, name
	return w
}

// ResourceUID sets the resource's UID (Webster tie-breaks hash it).
func (w *BindingWrapper) ResourceUID(uid types.UID) *BindingWrapper {
	w.Spec.Resource.UID = uid
	return w
}

// Replicas sets spec.replicas.
func (w *BindingWrapper) Replicas(n int32) *BindingWrapper {
	w.Spec.Replicas = n
	return w
}

// Placement sets spec.placement.
func (w *BindingWrapper) Placement(p *policyv1alpha1.Placement) *BindingWrapper {
	w.Spec.Placement = p
	return w
}

// TargetCluster appends to spec.clusters (the previous result).
func (w *BindingWrapper) TargetCluster(name string, replicas int32) *BindingWrapper {
	w.Spec.Clusters = append(w.Spec.Clusters, workv1alpha2.TargetCluster{Name: name, Replicas: replicas})
	return w
}

// EvictionTask appends a graceful eviction task from cluster.
func (w *BindingWrapper) EvictionTask(fromCluster string) *BindingWrapper {
	w.Spec.GracefulEvictionTasks = append(w.Spec.GracefulEvictionTasks, workv1alpha2.GracefulEvictionTask{
		FromCluster: fromCluster, Reason: workv1alpha2.EvictionReasonTaintUntolerated, Producer: workv1alpha2.EvictionProducerTaintManager,
	})
	return w
}

// SchedulerName sets spec.schedulerName.
func (w *BindingWrapper) SchedulerName(name string) *BindingWrapper {
	w.Spec.SchedulerName = name
	return w
}

// SuspendScheduling sets spec.suspension.scheduling.
func (w *BindingWrapper) SuspendScheduling(suspend bool) *BindingWrapper {
	if w.Spec.Suspension == nil {
		w.Spec.Suspension = &workv1alpha2.Suspension{}
	}
	w.Spec.Suspension.Scheduling = &suspend
	return w
}

// RequiredBy records a binding that requires this one (an attached
// dependency binding).
func (w *BindingWrapper) RequiredBy(namespace, name string) *BindingWrapper {
	w.Spec.RequiredBy = append(w.Spec.RequiredBy, workv1alpha2.BindingSnapshot{Namespace: namespace, Name: name})
	return w
}

// Annotation sets an annotation on the binding.
func (w *BindingWrapper) Annotation(key, value string) *BindingWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// Generation sets metadata.generation.
func (w *BindingWrapper) Generation(g int64) *BindingWrapper {
	w.ObjectMeta.Generation = g
	return w
}

// PlacementWrapper builds a Placement.
type PlacementWrapper struct{ policyv1alpha1.Placement }

// MakePlacement starts an empty placement (all clusters, Duplicated).
func MakePlacement() *PlacementWrapper { return &PlacementWrapper{} }

// Obj returns a copy of the built Placement.
func (w *PlacementWrapper) Obj() *policyv1alpha1.Placement { return w.DeepCopy() }

func (w *PlacementWrapper) affinity() *policyv1alpha1.ClusterAffinity {
	if w.ClusterAffinity == nil {
		w.ClusterAffinity = &policyv1alpha1.ClusterAffinity{}
	}
	return w.ClusterAffinity
}

// ClusterNames sets clusterAffinity.clusterNames.
func (w *PlacementWrapper) ClusterNames(names ...string) *PlacementWrapper {
	w.affinity().ClusterNames = names
	return w
}

// Exclude sets clusterAffinity.exclude.
func (w *PlacementWrapper) Exclude(names ...string) *PlacementWrapper {
	w.affinity().ExcludeClusters = names
	return w
}

// MatchLabels sets clusterAffinity.labelSelector.matchLabels.
func (w *PlacementWrapper) MatchLabels(labels map[string]string) *PlacementWrapper {
	w.affinity().LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}

// LabelSelector sets clusterAffinity.labelSelector.
func (w *PlacementWrapper) LabelSelector(s *metav1.LabelSelector) *PlacementWrapper {
	w.affinity().LabelSelector = s
	return w
}

// FieldRequirement adds a clusterAffinity.fieldSelector requirement.
func (w *PlacementWrapper) FieldRequirement(key string, op corev1.NodeSelectorOperator, values ...string) *PlacementWrapper {
	a := w.affinity()
	if a.FieldSelector == nil {
		a.FieldSelector = &policyv1alpha1.FieldSelector{}
	}
	a.FieldSelector.MatchExpressions = append(a.FieldSelector.MatchExpressions,
		corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	return w
}

// AffinityTerm appends a clusterAffinities term.
func (w *PlacementWrapper) AffinityTerm(name string, a policyv1alpha1.ClusterAffinity) *PlacementWrapper {
	w.ClusterAffinities = append(w.ClusterAffinities, policyv1alpha1.ClusterAffinityTerm{AffinityName: name, ClusterAffinity: a})
	return w
}

// Toleration appends a cluster toleration.
func (w *PlacementWrapper) Toleration(t corev1.Toleration) *PlacementWrapper {
	w.ClusterTolerations = append(w.ClusterTolerations, t)
	return w
}

// Duplicated sets replicaScheduling Duplicated.
func (w *PlacementWrapper) Duplicated() *PlacementWrapper {
	w.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
	return w
}

// Divided sets replicaScheduling Divided with the given preference (empty:
// Weighted by default).
func (w *PlacementWrapper) Divided(pref policyv1alpha1.ReplicaDivisionPreference) *PlacementWrapper {
	if w.ReplicaScheduling == nil {
		w.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{}
	}
	w.ReplicaScheduling.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingTypeDivided
	w.ReplicaScheduling.ReplicaDivisionPreference = pref
	return w
}

// StaticWeight makes the placement Divided/Weighted and appends a static
// weight for the clusters target selects.
func (w *PlacementWrapper) StaticWeight(target policyv1alpha1.ClusterAffinity, weight int64) *PlacementWrapper {
	w.Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
	if w.ReplicaScheduling.WeightPreference == nil {
		w.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{}
	}
	wp := w.ReplicaScheduling.WeightPreference
	wp.StaticWeightList = append(wp.StaticWeightList, policyv1alpha1.StaticClusterWeight{TargetCluster: target, Weight: weight})
	return w
}

// ClusterWeight is StaticWeight for one cluster name.
func (w *PlacementWrapper) ClusterWeight(cluster string, weight int64) *PlacementWrapper {
	return w.StaticWeight(policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}, weight)
}

// DynamicWeight makes the placement Divided/Weighted by available replicas.
func (w *PlacementWrapper) DynamicWeight() *PlacementWrapper {
	w.Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
	w.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	return w
}

// SpreadConstraint appends a spread constraint.
func (w *PlacementWrapper) SpreadConstraint(c policyv1alpha1.SpreadConstraint) *PlacementWrapper {
	w.SpreadConstraints = append(w.SpreadConstraints, c)
	return w
}

// ResourceRequest sets spec.replicaRequirements.resourceRequest from
// quantities such as {"cpu": "500m"}.
func (w *BindingWrapper) ResourceRequest(req map[corev1.ResourceName]string) *BindingWrapper {
	l := corev1.ResourceList{}
	for k, v := range req {
		l[k] = resource.MustParse(v)
	}
	w.Spec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: l}
	return w
}

// RescheduleTriggeredAt sets spec.rescheduleTriggeredAt.
func (w *BindingWrapper) RescheduleTriggeredAt(t metav1.Time) *BindingWrapper {
	w.Spec.RescheduleTriggeredAt = &t
	return w
}

// LastScheduledTime sets status.lastScheduledTime.
func (w *BindingWrapper) LastScheduledTime(t metav1.Time) *BindingWrapper {
	w.Status.LastScheduledTime = &t
	return w
}

// ObservedAffinityName sets status.schedulerObservingAffinityName.
func (w *BindingWrapper) ObservedAffinityName(name string) *BindingWrapper {
	w.Status.SchedulerObservedAffinityName = name
	return w
}

// SpreadBy appends a spread constraint by field (cluster, region, zone,
// provider) with minGroups and maxGroups.
func (w *PlacementWrapper) SpreadBy(field policyv1alpha1.SpreadFieldValue, minGroups, maxGroups int32) *PlacementWrapper {
	return w.SpreadConstraint(policyv1alpha1.SpreadConstraint{SpreadByField: field, MinGroups: minGroups, MaxGroups: maxGroups})
}

// SpreadByLabel appends a spread constraint by a cluster label.
func (w *PlacementWrapper) SpreadByLabel(key string, minGroups, maxGroups int32) *PlacementWrapper {
	return w.SpreadConstraint(policyv1alpha1.SpreadConstraint{SpreadByLabel: key, MinGroups: minGroups, MaxGroups: maxGroups})
}
