package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Rebalance moves one workload from its running distribution over member
// clusters to a new one in steps: target clusters are scaled up first, the
// sources come down only once the new pods are Ready, and the move can be
// paused, aborted or rolled back at any step. atoll creates one when the
// target distribution of a workload that already runs changes (a weight
// edit in its PropagationPolicy, a cluster joining or leaving the
// placement); a user may create one beforehand to set stages and pace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rbl,categories=atoll
// +kubebuilder:printcolumn:name="WORKLOAD",type=string,JSONPath=`.status.summary.workload`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="STEP",type=string,JSONPath=`.status.summary.step`
// +kubebuilder:printcolumn:name="PROGRESS",type=string,JSONPath=`.status.summary.progress`
// +kubebuilder:printcolumn:name="FROM",type=string,JSONPath=`.status.summary.from`
// +kubebuilder:printcolumn:name="TO",type=string,JSONPath=`.status.summary.to`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Rebalance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to move and how fast.
	// +required
	Spec RebalanceSpec `json:"spec"`

	// status is the progress of the move, from observed member counts.
	// +optional
	Status RebalanceStatus `json:"status,omitempty"`
}

// RebalanceSpec names the workload and paces its move.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.abort) && self.abort && has(self.rollback) && self.rollback)",message="abort and rollback cannot both be set"
type RebalanceSpec struct {
	// workload is the resource template being moved, in the Rebalance's
	// namespace. It cannot change once set.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.workload is immutable"
	Workload WorkloadReference `json:"workload"`

	// stages are intermediate weight maps the move passes through, in
	// order; the last one must give the distribution the workload's policy
	// gives. Empty: one stage, the policy's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Stages []Stage `json:"stages,omitempty"`

	// maxSurge is the most replicas moved in one step: an integer, or a
	// percentage of the workload's current total ("25%"). Default 25%.
	// Each step adds up to this many replicas on the target clusters before
	// the sources lose as many.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : self.matches('^[1-9][0-9]?%$|^100%$')",message="maxSurge must be a positive integer or a percentage from 1% to 100%"
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// minBatch is the fewest replicas a step moves (when that many are left
	// to move). Default 1. With member HPAs a batch larger than the HPA's
	// 10% tolerance is needed for a source to react by itself.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinBatch *int32 `json:"minBatch,omitempty"`

	// minStepInterval is the least time between the starts of two steps.
	// Default 0.
	// +optional
	MinStepInterval *metav1.Duration `json:"minStepInterval,omitempty"`

	// progressDeadlineSeconds is how long a step may go without progress
	// before onDeadline applies. Default 600. It never ends a step before
	// the slowest source HPA's scale-down stabilization window plus its
	// sync period has passed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// onDeadline is what a step that missed its deadline does: Pause
	// (default) or Rollback.
	// +optional
	// +kubebuilder:validation:Enum=Pause;Rollback
	OnDeadline DeadlineAction `json:"onDeadline,omitempty"`

	// capSources, for workloads whose member HPAs own the replicas, caps a
	// source cluster's HPA maxReplicas at its planned count once the
	// target's new pods are Ready, so the source sheds exactly the moved
	// replicas. false leaves the source HPA to scale down by itself as its
	// per-pod load falls; that needs traffic spread per pod and can stall
	// on the HPA's rounding (docs/rebalance.md). Default true.
	// +optional
	CapSources *bool `json:"capSources,omitempty"`

	// paused holds the move at the next step boundary.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// abort freezes the workload at its currently observed distribution.
	// No pod is deleted because of it. Final.
	// +optional
	Abort bool `json:"abort,omitempty"`

	// rollback moves the workload back to the distribution it had when
	// the move started, with the same stepping.
	// +optional
	Rollback bool `json:"rollback,omitempty"`
}

// WorkloadReference names a resource template.
type WorkloadReference struct {
	// apiVersion of the template, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	APIVersion string `json:"apiVersion"`
	// kind of the template, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// name of the template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Stage is one intermediate distribution, as cluster weights.
type Stage struct {
	// weights maps cluster names to their weight in this stage; clusters
	// not named get no replicas.
	// +required
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=256
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k] >= 0)",message="weights must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.exists(k, self[k] > 0)",message="at least one weight must be positive"
	Weights map[string]int64 `json:"weights"`

	// pause holds the move once this stage is reached, until resumed.
	// +optional
	Pause bool `json:"pause,omitempty"`
}

// DeadlineAction is what a step that missed its progress deadline does.
type DeadlineAction string

const (
	// DeadlinePause pauses the move.
	DeadlinePause DeadlineAction = "Pause"
	// DeadlineRollback rolls the move back.
	DeadlineRollback DeadlineAction = "Rollback"
)

// RebalancePhase is where a Rebalance stands.
// +kubebuilder:validation:Enum=Pending;Progressing;Paused;Completed;Aborted;RolledBack;Failed
type RebalancePhase string

const (
	// PhasePending: nothing to move yet, waiting for the policy change,
	// for edits to settle, or for the fleet-wide budget (condition Queued).
	PhasePending RebalancePhase = "Pending"
	// PhaseProgressing: a step is under way.
	PhaseProgressing RebalancePhase = "Progressing"
	// PhasePaused: held at a step boundary (by the user, a stage's pause, a
	// missed deadline or a participating cluster that is not Ready).
	PhasePaused RebalancePhase = "Paused"
	// PhaseCompleted: the workload runs the target distribution.
	PhaseCompleted RebalancePhase = "Completed"
	// PhaseAborted: frozen at the distribution observed at the abort.
	PhaseAborted RebalancePhase = "Aborted"
	// PhaseRolledBack: back at the distribution the move started from.
	PhaseRolledBack RebalancePhase = "RolledBack"
	// PhaseFailed: the move cannot go on (the workload is gone, failover
	// took over, the spec is invalid).
	PhaseFailed RebalancePhase = "Failed"
)

// Condition types of a Rebalance.
const (
	// ConditionProgressing is True while steps advance; False with the
	// reason when held (Paused, DeadlineExceeded, ClusterNotReady, Queued).
	ConditionProgressing = "Progressing"
	// ConditionValid is False when the spec cannot be acted on (unknown
	// workload, unknown cluster, last stage not the policy's).
	ConditionValid = "Valid"
	// ConditionPolicyDiffers is True when the running distribution is held
	// away from what the policy asks (after an abort or a rollback).
	ConditionPolicyDiffers = "PolicyDiffers"
)

// StepPhase is the half of a step under way.
type StepPhase string

const (
	// StepScalingUp: the targets grow; the sources keep their count.
	StepScalingUp StepPhase = "ScalingUp"
	// StepScalingDown: the targets' new pods are Ready; the sources shrink.
	StepScalingDown StepPhase = "ScalingDown"
)

// ClusterReplicas is a cluster's replica count in a distribution.
type ClusterReplicas struct {
	// name of the cluster.
	// +required
	Name string `json:"name"`
	// replicas in the cluster.
	// +required
	Replicas int32 `json:"replicas"`
}

// RebalanceStatus is observed progress. Everything needed to resume after
// a restart is here and in the binding: a restarted controller continues at
// the same step.
type RebalanceStatus struct {
	// observedGeneration is the spec generation this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is where the move stands.
	// +optional
	Phase RebalancePhase `json:"phase,omitempty"`
	// binding is the ResourceBinding of the workload.
	// +optional
	Binding string `json:"binding,omitempty"`
	// hpa reports whether member HPAs own the workload's replicas (the move
	// then steers HPA floors and caps instead of replica counts).
	// +optional
	HPA bool `json:"hpa,omitempty"`
	// from is the distribution when this move started.
	// +optional
	// +listType=atomic
	From []ClusterReplicas `json:"from,omitempty"`
	// to is the distribution this move ends at (the policy's, or from for
	// a rollback).
	// +optional
	// +listType=atomic
	To []ClusterReplicas `json:"to,omitempty"`
	// policyTarget is the scheduler's latest result for the policy, as
	// this move last saw it.
	// +optional
	// +listType=atomic
	PolicyTarget []ClusterReplicas `json:"policyTarget,omitempty"`
	// origin is the distribution the current direction of the move started
	// from: from, or where a rollback began.
	// +optional
	// +listType=atomic
	Origin []ClusterReplicas `json:"origin,omitempty"`
	// rollingBack is true once a rollback (asked for, or by a missed
	// deadline with onDeadline Rollback) took over: the move then ends at
	// from, in phase RolledBack.
	// +optional
	RollingBack bool `json:"rollingBack,omitempty"`
	// stage is the index of the stage under way.
	// +optional
	Stage int32 `json:"stage,omitempty"`
	// step counts the steps started; 0 before the first.
	// +optional
	Step int32 `json:"step,omitempty"`
	// stepPhase is the half of the current step under way; empty between
	// steps.
	// +optional
	StepPhase StepPhase `json:"stepPhase,omitempty"`
	// previous is the distribution the current step starts from.
	// +optional
	// +listType=atomic
	Previous []ClusterReplicas `json:"previous,omitempty"`
	// planned is the distribution the current step ends at (between steps,
	// where the last one ended).
	// +optional
	// +listType=atomic
	Planned []ClusterReplicas `json:"planned,omitempty"`
	// inFlight is the replicas the current step moves (counted against the
	// fleet-wide budget).
	// +optional
	InFlight int32 `json:"inFlight,omitempty"`
	// hpaEffectiveMin is the sum of the member HPAs' minReplicas (each
	// cluster that runs replicas gets at least 1, so it can exceed the
	// template HPA's minReplicas).
	// +optional
	HPAEffectiveMin *int32 `json:"hpaEffectiveMin,omitempty"`
	// clusters is the observed state of each participating cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterProgress `json:"clusters,omitempty"`
	// stepStartTime is when the current step (or its current half) began.
	// +optional
	StepStartTime *metav1.Time `json:"stepStartTime,omitempty"`
	// targetChangeTime is when the policy's target last changed; a step
	// starts only after edits have settled.
	// +optional
	TargetChangeTime *metav1.Time `json:"targetChangeTime,omitempty"`
	// estimatedCompletionTime is when the move should end at the observed
	// pace.
	// +optional
	EstimatedCompletionTime *metav1.Time `json:"estimatedCompletionTime,omitempty"`
	// history is the latest steps, newest last (at most 10).
	// +optional
	// +listType=atomic
	History []StepRecord `json:"history,omitempty"`
	// summary is the one-line view printed by kubectl and atoll.
	// +optional
	Summary Summary `json:"summary,omitempty"`
	// conditions: Progressing, Valid, PolicyDiffers.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterProgress is one cluster's part in a move.
type ClusterProgress struct {
	// name of the cluster.
	// +required
	Name string `json:"name"`
	// planned is the count the current step ends at.
	// +optional
	Planned int32 `json:"planned"`
	// spec is the count the member's workload asks for.
	// +optional
	Spec int32 `json:"spec"`
	// ready is the member's Ready replicas.
	// +optional
	Ready int32 `json:"ready"`
	// hpaMin, hpaMax and hpaDesired are the member HPA's bounds and its
	// desired replicas (absent without a member HPA).
	// +optional
	HPAMin *int32 `json:"hpaMin,omitempty"`
	// +optional
	HPAMax *int32 `json:"hpaMax,omitempty"`
	// +optional
	HPADesired *int32 `json:"hpaDesired,omitempty"`
	// scaleDownWindowSeconds is the member HPA's effective scale-down
	// stabilization window.
	// +optional
	ScaleDownWindowSeconds *int32 `json:"scaleDownWindowSeconds,omitempty"`
}

// StepRecord is one finished (or current) step.
type StepRecord struct {
	// step number.
	Step int32 `json:"step"`
	// startTime of the step.
	StartTime metav1.Time `json:"startTime"`
	// endTime of the step; absent while it runs.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// planned is the distribution the step ends at.
	// +listType=atomic
	Planned []ClusterReplicas `json:"planned"`
}

// Summary is the one-line view.
type Summary struct {
	// workload is Kind/name.
	// +optional
	Workload string `json:"workload,omitempty"`
	// step is "current/estimated total".
	// +optional
	Step string `json:"step,omitempty"`
	// progress is the share of replicas moved, "55%".
	// +optional
	Progress string `json:"progress,omitempty"`
	// from and to are the distributions as counts in cluster-name order,
	// "10:10".
	// +optional
	From string `json:"from,omitempty"`
	// +optional
	To string `json:"to,omitempty"`
}

// RebalanceList is a list of Rebalances.
//
// +kubebuilder:object:root=true
type RebalanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rebalance `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Rebalance{}, &RebalanceList{})
}
