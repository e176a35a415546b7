package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the PropagationPolicy resource.
const (
	ResourceKindPropagationPolicy     = "PropagationPolicy"
	ResourcePluralPropagationPolicy   = "propagationpolicies"
	ResourceSingularPropagationPolicy = "propagationpolicy"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=propagationpolicies,scope=Namespaced,shortName=pp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// PropagationPolicy places the selected resources of its own namespace onto
// member clusters.
type PropagationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired propagation behaviour.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// PropagationPolicyList is a list of PropagationPolicy.
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of PropagationPolicy.
	// +required
	Items []PropagationPolicy `json:"items"`
}

// PropagationSpec is the desired behaviour shared by PropagationPolicy and
// ClusterPropagationPolicy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.failover) || !has(self.failover.application) || (has(self.propagateDeps) && self.propagateDeps)",message="propagateDeps must be true when failover.application is set, so that dependencies move with the application",fieldPath=".propagateDeps"
// +kubebuilder:validation:XValidation:rule="!has(self.preemption) || self.preemption != 'Always' || self.resourceSelectors.all(s, has(s.name) && size(s.name) > 0)",message="every resourceSelectors entry must set name when preemption is Always",fieldPath=".resourceSelectors"
type PropagationSpec struct {
	// resourceSelectors selects the resources this policy propagates. At least
	// one selector is required: an empty list does not mean "everything",
	// so that sensitive kinds such as Secrets are never propagated by accident.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// association selects resources referenced by the selected ones.
	// Deprecated: use propagateDeps.
	// +optional
	Association bool `json:"association,omitempty"`

	// propagateDeps makes the dependencies of a selected workload (ConfigMaps,
	// Secrets, ServiceAccounts, PersistentVolumeClaims, ...) follow it to the
	// same clusters, including during failover, without listing them in
	// resourceSelectors. Defaults to false.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// placement selects the target clusters and says how replicas are spread
	// over them.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// priority orders policies that match the same resource template: the
	// higher value wins. On a tie the more specific selector wins (name over
	// labelSelector over apiVersion/kind), then the alphabetically lower
	// policy name. A template that a policy has already claimed is only taken
	// over by a higher-priority policy when preemption is Always.
	// Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Priority *int32 `json:"priority,omitempty"`

	// preemption says whether this policy may take over resource templates
	// that a lower-priority policy has already claimed: Always or Never.
	// Defaults to Never.
	// +optional
	// +kubebuilder:default=Never
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// dependentOverrides names OverridePolicies (in the policy's namespace)
	// that must exist before this policy takes effect. Matching overrides that
	// are not listed are still applied.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// schedulerName is the scheduler that places the selected resources.
	// Defaults to default-scheduler.
	// +optional
	// +kubebuilder:default=default-scheduler
	// +kubebuilder:validation:MaxLength=253
	SchedulerName string `json:"schedulerName,omitempty"`

	// failover configures how applications move away from failing clusters.
	// Failover is disabled when unset.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// conflictResolution says what to do when a propagated resource already
	// exists in a member cluster and is not managed by atoll: Abort keeps the
	// existing object and reports a conflict, Overwrite takes it over (useful
	// when migrating existing clusters). Defaults to Abort.
	// +optional
	// +kubebuilder:default=Abort
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// activationPreference controls when policy changes reach the resource
	// templates the policy manages. Empty applies them at once; Lazy applies
	// them to a template only when that template itself next changes, so a
	// policy change can be rolled out template by template.
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// suspension pauses parts of propagation. Nothing is suspended when unset.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// preserveResourcesOnDeletion keeps the propagated objects in member
	// clusters when the resource template is deleted. It applies to all
	// clusters alike and does not affect deletion of the policy itself.
	// Defaults to false.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// schedulePriority says where the scheduling priority of the selected
	// workloads comes from. Higher-priority workloads are scheduled first;
	// preemption between workloads is not implemented.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector selects resource templates by kind and, optionally,
// namespace, name or labels.
type ResourceSelector struct {
	// apiVersion is the API version of the selected resources, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	APIVersion string `json:"apiVersion"`

	// kind is the kind of the selected resources, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Kind string `json:"kind"`

	// namespace of the selected resources. Empty means the namespace of the
	// policy for namespaced policies, and any namespace for cluster-scoped
	// ones.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// name of the selected resource. Empty selects every resource of the kind.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// labelSelector selects resources by label. It is ignored when name is
	// set.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Suspension pauses parts of propagation.
//
// +kubebuilder:validation:XValidation:rule="!has(self.dispatching) || !self.dispatching || !has(self.dispatchingOnClusters) || !has(self.dispatchingOnClusters.clusterNames) || size(self.dispatchingOnClusters.clusterNames) == 0",message="dispatching: true suspends every cluster and cannot be combined with dispatchingOnClusters.clusterNames"
type Suspension struct {
	// dispatching, when true, stops changes from reaching any member cluster.
	// It cannot be combined with dispatchingOnClusters.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`

	// dispatchingOnClusters stops changes from reaching the listed clusters
	// only. It cannot be combined with dispatching.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists clusters to which dispatching is suspended.
type SuspendClusters struct {
	// clusterNames lists the suspended clusters by name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// FailoverBehavior configures failover for application failures and for
// cluster failures.
type FailoverBehavior struct {
	// application configures failover when the application is unhealthy on a
	// cluster. Application failover is disabled when unset; when set,
	// propagateDeps must be true so that dependencies move with it.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// cluster configures failover when a cluster fails (a NoExecute taint that
	// the placement does not tolerate). When unset, the controller-wide
	// default purge mode applies.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior configures application failover.
//
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || !has(self.purgeMode) || self.purgeMode == 'Gracefully' || self.purgeMode == 'Graciously'",message="gracePeriodSeconds only takes effect when purgeMode is Gracefully",fieldPath=".gracePeriodSeconds"
type ApplicationFailoverBehavior struct {
	// decisionConditions must all hold before failover starts.
	// +required
	DecisionConditions DecisionConditions `json:"decisionConditions"`

	// purgeMode says what happens to the old copy of the application:
	// Directly, Gracefully or Never. Defaults to Gracefully. The deprecated
	// spellings Immediately and Graciously are accepted and mean Directly and
	// Gracefully.
	// +optional
	// +kubebuilder:default=Gracefully
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never;Immediately;Graciously
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// gracePeriodSeconds is how long, with purgeMode Gracefully, the old copy
	// is kept at most while the new one becomes healthy. Controllers use 600
	// when it is unset. It must be positive and is only allowed with
	// Gracefully.
	// +optional
	// +kubebuilder:validation:Minimum=1
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// statePreservation copies state from the old copy into the new one, as
	// labels, when the application moves. No state is preserved when unset.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// ClusterFailoverBehavior configures cluster failover.
type ClusterFailoverBehavior struct {
	// purgeMode says what happens to the copy on the failed cluster:
	// Directly (removed as soon as the cluster can be reached), Gracefully
	// (removed once the replacement is healthy or the grace period passed)
	// or Never (kept until an operator removes the eviction task). Defaults
	// to Gracefully. The deprecated spellings Immediately and Graciously are
	// accepted and mean Directly and Gracefully.
	// +optional
	// +kubebuilder:default=Gracefully
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never;Immediately;Graciously
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// statePreservation copies state from the old copy into the new one, as
	// labels, when the application moves. No state is preserved when unset.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions are the conditions that must all hold before an
// application fails over.
type DecisionConditions struct {
	// tolerationSeconds is how long the application must stay unhealthy on a
	// cluster before it is moved away. 0 moves it at once. Defaults to 300.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=0
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// StatePreservation lists the pieces of state to carry over during failover.
type StatePreservation struct {
	// rules each extract one value from the old copy's status and pass it to
	// the new copy as a label.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule extracts one value to carry over during failover.
type StatePreservationRule struct {
	// aliasLabelName is the label key under which the value is passed to the
	// new copy. It must be a valid label key.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	AliasLabelName string `json:"aliasLabelName"`

	// jsonPath is a kubectl-style JSONPath evaluated against the resource's
	// status, e.g. "{.availableReplicas}" (not "{.status.availableReplicas}").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	JSONPath string `json:"jsonPath"`
}

// PreemptionBehavior says whether a policy may take over resource templates
// claimed by a lower-priority policy.
// +kubebuilder:validation:Enum=Always;Never
type PreemptionBehavior string

const (
	// PreemptAlways allows preemption. A PropagationPolicy may take over
	// templates claimed by lower-priority policies, and any template claimed
	// by a ClusterPropagationPolicy regardless of priority. A
	// ClusterPropagationPolicy may only take over from other
	// ClusterPropagationPolicies.
	PreemptAlways PreemptionBehavior = "Always"

	// PreemptNever never takes over a claimed template.
	PreemptNever PreemptionBehavior = "Never"
)

// ConflictResolution says how to treat an object that already exists in a
// member cluster and is not managed by atoll.
// +kubebuilder:validation:Enum=Abort;Overwrite
type ConflictResolution string

const (
	// ConflictOverwrite takes the existing object over.
	ConflictOverwrite ConflictResolution = "Overwrite"

	// ConflictAbort leaves the existing object alone and reports a conflict.
	ConflictAbort ConflictResolution = "Abort"
)

// ActivationPreference says when policy changes reach the templates a policy
// manages.
// +kubebuilder:validation:Enum="";Lazy
type ActivationPreference string

const (
	// LazyActivation applies a policy change to a template only when the
	// template itself next changes.
	LazyActivation ActivationPreference = "Lazy"
)

// SchedulePriority says where the scheduling priority of a workload comes
// from.
type SchedulePriority struct {
	// priorityClassSource is where the PriorityClass is looked up. Only
	// KubePriorityClass (scheduling.k8s.io/v1 PriorityClass) is supported.
	// +required
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`

	// priorityClassName is the name of the PriorityClass to use.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName"`
}

// PriorityClassSource is where a PriorityClass is looked up.
// +kubebuilder:validation:Enum=KubePriorityClass
type PriorityClassSource string

const (
	// KubePriorityClass uses a Kubernetes scheduling.k8s.io/v1 PriorityClass.
	KubePriorityClass PriorityClassSource = "KubePriorityClass"

	// PodPriorityClass would use the priorityClassName of the pod template.
	// Reserved by Karmada; not accepted by the API yet.
	PodPriorityClass PriorityClassSource = "PodPriorityClass"

	// FederatedPriorityClass would use a Karmada FederatedPriorityClass.
	// Reserved by Karmada; not accepted by the API yet.
	FederatedPriorityClass PriorityClassSource = "FederatedPriorityClass"
)

func init() {
	objectTypes = append(objectTypes, &PropagationPolicy{}, &PropagationPolicyList{})
}
