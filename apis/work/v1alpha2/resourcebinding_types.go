package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// Names of the ResourceBinding resource.
const (
	ResourceKindResourceBinding     = "ResourceBinding"
	ResourcePluralResourceBinding   = "resourcebindings"
	ResourceSingularResourceBinding = "resourcebinding"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceBinding binds one namespaced resource template to the policy that
// claimed it. Its spec carries the scheduling intent and, in spec.clusters,
// the scheduling result; its status aggregates the state of the resource in
// every member cluster.
type ResourceBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the scheduling intent and result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// status is the observed state of the resource across member clusters.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceBindingList is a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of ResourceBinding.
	// +required
	Items []ResourceBinding `json:"items"`
}

// ResourceBindingSpec is the scheduling intent and result shared by
// ResourceBinding and ClusterResourceBinding. Most fields are copied from the
// claiming policy; clusters is written by the scheduler.
type ResourceBindingSpec struct {
	// resource is the resource template this binding propagates.
	// +required
	Resource ObjectReference `json:"resource"`

	// propagateDeps is copied from the policy: the template's dependencies
	// follow it. Defaults to false.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// replicaRequirements are the resources and scheduling constraints of one
	// replica.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// replicas is the replica count of the template.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas,omitempty"`

	// components describe workloads made of several pod templates (for
	// example a training job with master and worker pods), one entry per pod
	// template. It is meant to replace replicas and replicaRequirements and is
	// only filled for multi-template scheduling.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Components []Component `json:"components,omitempty"`

	// clusters is the scheduling result: the target clusters and the replicas
	// each runs.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=5000
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// placement is copied from the policy.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// gracefulEvictionTasks are evictions in progress. When a controller (for
	// example on a NoExecute taint or an application failure) evicts the
	// resource from a cluster, it removes the cluster from clusters and adds a
	// task; the scheduler may pick a replacement; the task is dropped, and the
	// old copy deleted, once the replacement is healthy or the grace period
	// (10 minutes by default) has passed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// requiredBy lists the bindings whose workloads depend on this resource;
	// a dependency goes where its dependents go.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// schedulerName is copied from the policy.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SchedulerName string `json:"schedulerName,omitempty"`

	// failover is copied from the policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// conflictResolution is copied from the policy: Abort or Overwrite.
	// Defaults to Abort.
	// +optional
	// +kubebuilder:default=Abort
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// rescheduleTriggeredAt requests a fresh scheduling that ignores the
	// previous result. It takes effect only when it is later than
	// status.lastScheduledTime. RFC 3339, in UTC.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// suspension pauses dispatching and scheduling. Nothing is suspended when
	// unset.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// preserveResourcesOnDeletion keeps the objects in member clusters when
	// the binding is deleted. Defaults to false.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// schedulePriority is the scheduling priority of the workload.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// workloadAffinityGroups are the affinity groups resolved from
	// placement.workloadAffinity. They are only used for ResourceBindings,
	// since workload affinity groups are namespaced.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference locates a resource template on the control plane.
type ObjectReference struct {
	// apiVersion of the resource, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	APIVersion string `json:"apiVersion"`

	// kind of the resource, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Kind string `json:"kind"`

	// namespace of the resource; empty for cluster-scoped resources.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// name of the resource.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// uid of the resource.
	// +optional
	UID types.UID `json:"uid,omitempty"`

	// resourceVersion of the resource when the binding was last updated from
	// it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements are the resources and constraints of one replica.
type ReplicaRequirements struct {
	// nodeClaim holds the replica's hard node constraints.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// resourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// namespace of the workload, used for quota checks.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// priorityClassName of the workload's pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// Component is one pod template of a multi-template workload.
type Component struct {
	// name identifies the component within the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`

	// replicas is the component's replica count.
	// +required
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`

	// replicaRequirements are the resources and constraints of one replica
	// of the component.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentReplicaRequirements are the resources and constraints of one
// replica of a component.
type ComponentReplicaRequirements struct {
	// nodeClaim holds the replica's hard node constraints.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// resourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// priorityClassName of the component's pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim holds the hard node constraints of a replica.
type NodeClaim struct {
	// hardNodeAffinity is the pod's required node affinity
	// (requiredDuringSchedulingIgnoredDuringExecution).
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`

	// nodeSelector is the pod's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations are the pod's tolerations.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// TargetCluster is one cluster of the scheduling result.
type TargetCluster struct {
	// name of the cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// replicas assigned to the cluster.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas,omitempty"`

	// components are the replicas assigned per component, for multi-template
	// workloads only. Names match spec.components[].name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Components []TargetComponent `json:"components,omitempty"`
}

// TargetComponent is the replicas of one component assigned to a cluster.
type TargetComponent struct {
	// name of the component, as in spec.components[].name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`

	// replicas of the component assigned to the cluster.
	// +required
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask is an eviction from one cluster in progress.
//
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || !has(self.suppressDeletion) || !self.suppressDeletion",message="gracePeriodSeconds cannot be combined with suppressDeletion: true",fieldPath=".gracePeriodSeconds"
type GracefulEvictionTask struct {
	// fromCluster is the cluster the resource is evicted from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	FromCluster string `json:"fromCluster"`

	// purgeMode says what happens to the old copy: Directly, Gracefully or
	// Never (the deprecated Immediately and Graciously mean Directly and
	// Gracefully).
	// +optional
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never;Immediately;Graciously
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// replicas is the number of replicas evicted; unset for resources without
	// replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// reason is a CamelCase identifier of why the resource is evicted, e.g.
	// TaintUntolerated or ApplicationFailure.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	Reason string `json:"reason"`

	// message explains the eviction to humans; it may be empty.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// producer is the controller that started the eviction, e.g.
	// TaintManager.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Producer string `json:"producer"`

	// gracePeriodSeconds is how long the old copy is kept at most while the
	// replacement becomes healthy. It cannot be combined with
	// suppressDeletion: true.
	// +optional
	// +kubebuilder:validation:Minimum=1
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// suppressDeletion, when true, keeps the old copy until a person or tool
	// ends the task. It cannot be combined with gracePeriodSeconds.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// preservedLabelState is state taken from the old copy (see
	// failover statePreservation) that is injected as labels into the new
	// copy.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// creationTimestamp is the server time when the task was created, in RFC
	// 3339 form and UTC. Set by the system; clients must not set it.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`

	// clustersBeforeFailover are the clusters the application ran on before
	// the failover.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`
}

// BindingSnapshot is a dependent binding and where it is scheduled.
type BindingSnapshot struct {
	// namespace of the binding; empty for a ClusterResourceBinding.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// name of the binding.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// clusters is the dependent binding's scheduling result.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5000
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension pauses dispatching and scheduling of a binding.
type Suspension struct {
	policyv1alpha1.Suspension `json:",inline"`

	// scheduling, when true, stops the scheduler from processing the
	// binding; false or unset resumes it. Meant to be set when the binding is
	// created (for example by an admission webhook of a queueing system);
	// suspending an already scheduled binding has no effect.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the scheduling priority of a binding.
type SchedulePriority struct {
	// priority orders scheduling: higher values are scheduled first.
	// Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the affinity groups of a workload, each
// serialized as <label key>=<label value>, e.g. app.group=frontend.
type WorkloadAffinityGroups struct {
	// affinityGroup is the group the workload is co-located with.
	// +optional
	// +kubebuilder:validation:MaxLength=381
	AffinityGroup string `json:"affinityGroup,omitempty"`

	// antiAffinityGroup is the group the workload is kept apart from.
	// +optional
	// +kubebuilder:validation:MaxLength=381
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ResourceBindingStatus is the observed state of a bound resource.
type ResourceBindingStatus struct {
	// schedulerObservedGeneration is the metadata.generation the scheduler
	// last acted on. While it is below metadata.generation the scheduling
	// result is not up to date.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// schedulerObservingAffinityName is the clusterAffinities term the
	// current scheduling result is based on.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// lastScheduledTime is when the scheduler last scheduled the binding
	// successfully. RFC 3339, in UTC.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// conditions are the binding's conditions, of types Scheduled and
	// FullyApplied.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// aggregatedStatus holds the state of the resource in each member
	// cluster, one entry per cluster.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	// +kubebuilder:validation:MaxItems=5000
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// AggregatedStatusItem is the state of the resource in one member cluster.
type AggregatedStatusItem struct {
	// clusterName is the member cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName"`

	// status is the status reported for the resource in that cluster, as
	// returned by the resource interpreter.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Status *runtime.RawExtension `json:"status,omitempty"`

	// applied says whether the resource was applied to the cluster
	// successfully.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// appliedMessage explains the applied state, usually the error of a
	// failed apply.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	AppliedMessage string `json:"appliedMessage,omitempty"`

	// health is Healthy, Unhealthy or Unknown, as interpreted for the kind.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceHealth is the interpreted health of a resource in a cluster.
// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
type ResourceHealth string

const (
	// ResourceHealthy means the resource is healthy in the cluster.
	ResourceHealthy ResourceHealth = "Healthy"

	// ResourceUnhealthy means the resource is unhealthy in the cluster.
	ResourceUnhealthy ResourceHealth = "Unhealthy"

	// ResourceUnknown means the resource's health could not be determined.
	ResourceUnknown ResourceHealth = "Unknown"
)

// Condition types of ResourceBinding and ClusterResourceBinding.
const (
	// Scheduled says whether the binding has been scheduled.
	Scheduled = "Scheduled"

	// FullyApplied says whether the resource has been applied to every
	// scheduled cluster.
	FullyApplied = "FullyApplied"

	// EvictionBlocked is True while failover wants to move the resource off
	// a cluster but holds back, for example because no other cluster can
	// take it (the last copy is never removed). atoll's addition; absent
	// when nothing is held back.
	EvictionBlocked = "EvictionBlocked"

	// Released is True while no policy claims the binding's template (see
	// ReleasedAnnotation): the member objects are kept as they are and no
	// longer synced. atoll's addition; absent while the template is claimed.
	Released = "Released"

	// Dispatching is False while the policy suspends dispatching
	// (suspension.dispatching, or dispatchingOnClusters naming scheduled
	// clusters) and True once it resumes, the condition Karmada keeps on
	// each Work. Absent on a binding that was never suspended.
	Dispatching = "Dispatching"
)

// Reasons of the Dispatching condition (Karmada's, on its Works).
const (
	BindingReasonSuspendDispatching = "SuspendDispatching"
	BindingReasonDispatching        = "Dispatching"
)

// Reasons of the EvictionBlocked condition.
const (
	// BindingReasonNoAlternativeCluster: no other cluster can take the
	// replicas, so the copy stays where it is.
	BindingReasonNoAlternativeCluster = "NoAlternativeCluster"

	// BindingReasonLargeScaleDisruption: too many clusters are unhealthy at
	// once (more likely the federation's own network than the members), so
	// taint-based evictions are paused.
	BindingReasonLargeScaleDisruption = "LargeScaleDisruption"

	// BindingReasonStateNotCollected: the policy's failover
	// statePreservation cannot be read from the copy being evicted yet
	// (no status from it, or a rule that does not fit it).
	BindingReasonStateNotCollected = "StateNotCollected"
)

// Reasons of the Scheduled condition.
const (
	// BindingReasonSuccess: scheduling succeeded.
	BindingReasonSuccess = "Success"

	// BindingReasonSchedulerError: an internal error, such as a failed API
	// call, stopped scheduling.
	BindingReasonSchedulerError = "SchedulerError"

	// BindingReasonNoClusterFit: no cluster passed the filters.
	BindingReasonNoClusterFit = "NoClusterFit"

	// BindingReasonUnschedulable: the binding cannot be scheduled now, for
	// example for lack of capacity.
	BindingReasonUnschedulable = "Unschedulable"

	// BindingReasonQuotaExceeded: the request exceeds a FederatedResourceQuota
	// of the namespace.
	BindingReasonQuotaExceeded = "QuotaExceeded"
)

func init() {
	objectTypes = append(objectTypes, &ResourceBinding{}, &ResourceBindingList{})
}
