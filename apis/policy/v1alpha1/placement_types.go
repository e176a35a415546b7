package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement selects the clusters a resource goes to and how its replicas are
// spread over them. It is used by propagation policies and copied into
// ResourceBindings.
//
// +kubebuilder:validation:XValidation:rule="!has(self.clusterAffinity) || !has(self.clusterAffinities)",message="clusterAffinity and clusterAffinities cannot both be set"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterAffinities) || self.clusterAffinities.all(t, !has(t.overflowAffinities) || size(t.overflowAffinities) == 0) || (has(self.replicaScheduling) && has(self.replicaScheduling.replicaSchedulingType) && self.replicaScheduling.replicaSchedulingType == 'Divided' && has(self.replicaScheduling.replicaDivisionPreference) && (self.replicaScheduling.replicaDivisionPreference == 'Aggregated' || (self.replicaScheduling.replicaDivisionPreference == 'Weighted' && has(self.replicaScheduling.weightPreference) && has(self.replicaScheduling.weightPreference.dynamicWeight))))",message="clusterAffinities[].overflowAffinities require replicaScheduling Divided with replicaDivisionPreference Aggregated, or Weighted with weightPreference.dynamicWeight",fieldPath=".clusterAffinities"
type Placement struct {
	// clusterAffinity restricts scheduling to the clusters it selects. It
	// cannot be combined with clusterAffinities. When neither is set, every
	// cluster is a candidate.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// clusterAffinities is an ordered list of cluster groups. The scheduler
	// tries the groups in order and uses the first one that can hold the
	// workload; if none can, scheduling fails. A cluster may belong to several
	// groups. It cannot be combined with clusterAffinity. Typical uses are a
	// preferred private group with a public-cloud fallback, or primary and
	// disaster-recovery groups. affinityName must be unique in the list.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.affinityName == a.affinityName))",message="clusterAffinities[].affinityName must be unique"
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// clusterTolerations lets the placement use clusters with matching taints.
	// Tolerations with tolerationSeconds bound how long a NoExecute taint is
	// tolerated before the workload is moved away. The operators Lt and Gt are
	// not supported for clusters.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator == 'Exists' || t.operator == 'Equal')",message="clusterTolerations operator must be Exists or Equal"
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// spreadConstraints limit how many cluster groups (clusters, regions,
	// zones, providers or values of a cluster label) the workload is spread
	// over. An entry that sets neither spreadByField nor spreadByLabel means
	// spreadByField: cluster. Each spreadByField value may appear once, and
	// when any entry spreads by a field, one entry must spread by cluster.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.spreadByField) || size(self.filter(d, has(d.spreadByField) && d.spreadByField == c.spreadByField)) == 1) && size(self.filter(c, (has(c.spreadByField) && c.spreadByField == 'cluster') || (!has(c.spreadByField) && (!has(c.spreadByLabel) || size(c.spreadByLabel) == 0)))) <= 1",message="spreadConstraints may contain at most one entry per spreadByField value (an entry without spreadByField and spreadByLabel counts as spreadByField: cluster)"
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, has(c.spreadByField)) || self.exists(c, (has(c.spreadByField) && c.spreadByField == 'cluster') || (!has(c.spreadByField) && (!has(c.spreadByLabel) || size(c.spreadByLabel) == 0)))",message="spreadConstraints must include a spreadByField: cluster entry when any entry uses spreadByField"
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// replicaScheduling says how the replicas of a workload (Deployments,
	// StatefulSets, Jobs, ...) are assigned to the selected clusters. When
	// unset, every cluster gets the full replica count (Duplicated).
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// workloadAffinity co-locates or separates workloads by a label on their
	// resource templates.
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// SpreadFieldValue is a cluster field by which clusters are grouped for
// spreading.
// +kubebuilder:validation:Enum=cluster;region;zone;provider
type SpreadFieldValue string

// The cluster fields that spread constraints can group by.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint bounds the number of cluster groups a workload spreads
// over.
//
// +kubebuilder:validation:XValidation:rule="!has(self.spreadByField) || !has(self.spreadByLabel) || size(self.spreadByLabel) == 0",message="spreadByField and spreadByLabel cannot both be set"
// +kubebuilder:validation:XValidation:rule="!has(self.maxGroups) || self.maxGroups == 0 || !has(self.minGroups) || self.minGroups <= self.maxGroups",message="minGroups must be less than or equal to maxGroups",fieldPath=".minGroups"
type SpreadConstraint struct {
	// spreadByField groups clusters by one of their fields: cluster, region,
	// zone or provider. It cannot be combined with spreadByLabel. When both
	// are empty, spreadByField is cluster.
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// spreadByLabel groups clusters by the value of this cluster label key.
	// It cannot be combined with spreadByField.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// maxGroups is the largest number of groups to select. 0 means no upper
	// bound.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxGroups int32 `json:"maxGroups,omitempty"`

	// minGroups is the smallest number of groups to select. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	MinGroups int32 `json:"minGroups,omitempty"`
}

// ClusterAffinity selects clusters. All set filters must match; an empty
// ClusterAffinity selects every cluster.
type ClusterAffinity struct {
	// labelSelector selects clusters by label.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// fieldSelector selects clusters by their provider, region or zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	// clusterNames selects clusters by name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// exclude lists clusters that are never selected, whatever the other
	// filters say.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// FieldSelector selects clusters by their fields.
//
// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.key == 'provider' || e.key == 'region' || e.key == 'zone')",message="fieldSelector.matchExpressions key must be provider, region or zone"
// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator == 'In' || e.operator == 'NotIn')",message="fieldSelector.matchExpressions operator must be In or NotIn"
type FieldSelector struct {
	// matchExpressions are requirements on the cluster fields provider,
	// region and zone, with the operators In and NotIn. All must hold.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterAffinityTerm is a named cluster group in clusterAffinities.
//
// +kubebuilder:validation:XValidation:rule="!has(self.overflowAffinities) || size(self.overflowAffinities) == 0 || has(self.labelSelector) || has(self.fieldSelector) || (has(self.clusterNames) && size(self.clusterNames) > 0) || (has(self.exclude) && size(self.exclude) > 0)",message="overflowAffinities require the term's own cluster selection (labelSelector, fieldSelector, clusterNames or exclude) to be set",fieldPath=".overflowAffinities"
// +kubebuilder:validation:XValidation:rule="!has(self.overflowAffinities) || self.overflowAffinities.all(o, o.affinityName != self.affinityName)",message="overflowAffinities[].affinityName must differ from the term's affinityName",fieldPath=".overflowAffinities"
type ClusterAffinityTerm struct {
	// affinityName names the group. It must be a valid label key of at most
	// 32 characters and unique within clusterAffinities.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// overflowAffinities are further groups that the scheduler adds, in
	// order, when this term's own clusters lack capacity, and releases in
	// reverse order when the workload scales down. A cluster listed in
	// several overflow groups belongs to the first. They need the term's own
	// selection to be set, and replicaScheduling Divided with Aggregated or
	// dynamic-weight division.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.affinityName == a.affinityName))",message="overflowAffinities[].affinityName must be unique"
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinity is a named overflow group of a ClusterAffinityTerm.
type OverflowClusterAffinity struct {
	// affinityName names the group. It must be a valid label key of at most
	// 32 characters, unique among the term's overflow groups and different
	// from the term's own affinityName.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}

// WorkloadAffinity groups workloads by a label on their resource templates.
// Groups are scoped to a namespace.
//
// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || !has(self.antiAffinity) || self.affinity.groupByLabelKey != self.antiAffinity.groupByLabelKey",message="workloadAffinity affinity and antiAffinity must not use the same groupByLabelKey"
type WorkloadAffinity struct {
	// affinity places the workload only on clusters that already run
	// workloads of its group. The first workload of a group is not blocked.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`

	// antiAffinity keeps the workload off clusters that already run workloads
	// of its group.
	// +optional
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm is an affinity rule between workloads.
type WorkloadAffinityTerm struct {
	// groupByLabelKey is the label key on resource templates whose value names
	// the affinity group, e.g. app.group: workloads labelled
	// app.group=frontend form one group.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm is an anti-affinity rule between workloads.
type WorkloadAntiAffinityTerm struct {
	// groupByLabelKey is the label key on resource templates whose value names
	// the anti-affinity group; workloads of one group are kept on different
	// clusters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// ReplicaSchedulingType says whether each cluster runs all replicas or a
// share of them.
// +kubebuilder:validation:Enum=Duplicated;Divided
type ReplicaSchedulingType string

const (
	// ReplicaSchedulingTypeDuplicated gives every selected cluster the full
	// replica count.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"

	// ReplicaSchedulingTypeDivided divides the replicas among the selected
	// clusters according to replicaDivisionPreference.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference says how Divided replicas are shared out.
// +kubebuilder:validation:Enum=Aggregated;Weighted
type ReplicaDivisionPreference string

const (
	// ReplicaDivisionPreferenceAggregated packs replicas into as few clusters
	// as their available capacity allows.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"

	// ReplicaDivisionPreferenceWeighted divides replicas by the weights in
	// weightPreference.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy says how replicas are assigned to clusters.
type ReplicaSchedulingStrategy struct {
	// replicaSchedulingType is Duplicated (every cluster runs all replicas) or
	// Divided (the replicas are shared out). Defaults to Divided.
	// +optional
	// +kubebuilder:default=Divided
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// replicaDivisionPreference says how Divided replicas are shared out:
	// Aggregated packs them into as few clusters as possible, Weighted divides
	// them by weightPreference. With Divided and no preference, Weighted is
	// used.
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// weightPreference gives the weights for Weighted division. When unset,
	// all clusters weigh the same.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ClusterPreferences gives the weights for Weighted division.
type ClusterPreferences struct {
	// staticWeightList gives fixed weights to the clusters each entry selects.
	// A cluster matched by several entries takes the largest weight; clusters
	// matched by none get no replicas. It is ignored when dynamicWeight is set.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// dynamicWeight derives the weights from cluster state. The only factor
	// is AvailableReplicas: each cluster weighs as many replicas as it can
	// still run. When set, staticWeightList is ignored.
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the weight of the clusters one selector picks.
type StaticClusterWeight struct {
	// targetCluster selects the clusters that get this weight.
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`

	// weight is the relative share of replicas of each selected cluster. It
	// must be at least 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	Weight int64 `json:"weight"`
}

// DynamicWeightFactor is the cluster property that dynamic weights follow.
// +kubebuilder:validation:Enum=AvailableReplicas
type DynamicWeightFactor string

const (
	// DynamicWeightByAvailableReplicas weighs each cluster by the number of
	// replicas it can still run. For example, with room for 6, 12 and 18
	// replicas, 12 replicas are divided 2, 4 and 6.
	DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"
)
