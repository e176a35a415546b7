package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// ClusterBaseline delivers a cluster's baseline components (CRDs,
// namespaces and RBAC, agents, operators and their custom resources) to
// every matching member cluster in dependency order: on each cluster, a
// component is dispatched only once all the components it depends on are
// ready there. Until its gating components are ready, a cluster that joined
// after the baseline existed carries the taint
// baseline.atoll.dev/not-ready:NoSchedule, so business workloads are not
// scheduled there before the baseline.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cbl,categories=atoll
// +kubebuilder:printcolumn:name="READY-CLUSTERS",type=string,JSONPath=`.status.readyClusters`
// +kubebuilder:printcolumn:name="COMPONENTS",type=integer,JSONPath=`.status.components`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterBaseline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the components and the clusters that get them.
	// +required
	Spec ClusterBaselineSpec `json:"spec"`

	// status is the delivery progress on every matching cluster.
	// +optional
	Status ClusterBaselineStatus `json:"status,omitempty"`
}

// ClusterBaselineSpec declares a baseline.
type ClusterBaselineSpec struct {
	// clusterSelector selects the member clusters (by their labels) that
	// get the baseline. Empty or unset: every cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// components are the baseline's parts. dependsOn references must name
	// components of this list and must not form a cycle; both are refused
	// at admission.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=200
	Components []BaselineComponent `json:"components"`
}

// BaselineComponent is one part of a baseline: resource templates in the
// control plane, delivered together once their prerequisites are ready.
type BaselineComponent struct {
	// name identifies the component in dependsOn lists and in status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// resourceSelectors select the component's resource templates
	// (Karmada's ResourceSelector). A template selected here is propagated
	// by the baseline; a template already claimed by a PropagationPolicy is
	// reported in status, not taken over.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	ResourceSelectors []policyv1alpha1.ResourceSelector `json:"resourceSelectors"`

	// dependsOn names the components that must be ready on a cluster
	// before this one is dispatched there (and before a change of this
	// one rolls out there).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	DependsOn []string `json:"dependsOn,omitempty"`

	// readinessExpression is a CEL expression over the member object
	// (`self`) that says when it is ready, replacing the built-in rule
	// (kstatus: workloads rolled out and available, Jobs complete, CRDs
	// Established). A custom resource without status conditions needs one
	// to count as ready; `true` means mere existence.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	ReadinessExpression string `json:"readinessExpression,omitempty"`

	// timeout is how long the component may take to become ready on a
	// cluster after it was dispatched (or changed) there before it is
	// reported Failed. Delivery goes on: a late component still unblocks
	// its dependents once ready. Default 10m.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// gatesScheduling: the cluster's baseline taint waits for this
	// component. Default true.
	// +optional
	GatesScheduling *bool `json:"gatesScheduling,omitempty"`
}

// DefaultComponentTimeout is a component's timeout when unset.
const DefaultComponentTimeout = 10 * time.Minute

// Gates reports whether the component gates scheduling (default true).
func (c *BaselineComponent) Gates() bool { return c.GatesScheduling == nil || *c.GatesScheduling }

// ClusterBaselineStatus is the delivery matrix: one entry per matching
// cluster, one per component inside it.
type ClusterBaselineStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready (every matching cluster has every component
	// ready; reasons Ready, InProgress, Failed, InvalidSpec, NoClusters).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// readyClusters is "ready/matching", e.g. "2/3".
	// +optional
	ReadyClusters string `json:"readyClusters,omitempty"`

	// components is the number of components in spec.
	// +optional
	Components int32 `json:"components,omitempty"`

	// clusters are the matching clusters (and those being withdrawn from),
	// by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []BaselineClusterStatus `json:"clusters,omitempty"`
}

// BaselineClusterStatus is the baseline's progress on one cluster.
type BaselineClusterStatus struct {
	// name of the cluster.
	// +required
	Name string `json:"name"`

	// ready counts the components ready on this cluster, as "n/N".
	// +optional
	Ready string `json:"ready,omitempty"`

	// gated: the cluster carries the baseline taint because of this
	// baseline.
	// +optional
	Gated bool `json:"gated,omitempty"`

	// matchedTime is when the baseline first saw the cluster match.
	// +optional
	MatchedTime *metav1.Time `json:"matchedTime,omitempty"`

	// baselineReadyTime is when every gating component was first ready on
	// the cluster; the cluster is never gated again by this baseline
	// after it.
	// +optional
	BaselineReadyTime *metav1.Time `json:"baselineReadyTime,omitempty"`

	// components are the components' states on this cluster, in
	// dependency order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Components []ComponentStatus `json:"components,omitempty"`
}

// ComponentState is where a component stands on one cluster.
// +kubebuilder:validation:Enum=Waiting;Applying;Ready;Failed;Withdrawing
type ComponentState string

// Component states.
const (
	// ComponentWaiting: not dispatched; a prerequisite is not ready yet, or
	// its templates are not claimed yet. Waiting is never an error.
	ComponentWaiting ComponentState = "Waiting"
	// ComponentApplying: dispatched, not ready yet.
	ComponentApplying ComponentState = "Applying"
	// ComponentReady: every object of the component is ready on the
	// cluster at its current template version.
	ComponentReady ComponentState = "Ready"
	// ComponentFailed: kstatus says Failed, an apply failed, a template is
	// claimed by another policy, or it was not ready within its timeout.
	ComponentFailed ComponentState = "Failed"
	// ComponentWithdrawing: being removed from the cluster, after its
	// dependents.
	ComponentWithdrawing ComponentState = "Withdrawing"
)

// ComponentStatus is one component's state on one cluster.
type ComponentStatus struct {
	// name of the component.
	// +required
	Name string `json:"name"`

	// state is Waiting, Applying, Ready, Failed or Withdrawing.
	// +required
	State ComponentState `json:"state"`

	// message says what it waits for ("Waiting for widget-crd") or why it
	// failed.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// since is when the component entered its state.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`

	// readyTime is when the component last became ready on the cluster.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterBaselineList is a list of ClusterBaseline.
type ClusterBaselineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterBaseline `json:"items"`
}

// Condition reasons of ClusterBaseline's Ready condition.
const (
	BaselineReasonReady       = "Ready"
	BaselineReasonInProgress  = "InProgress"
	BaselineReasonFailed      = "Failed"
	BaselineReasonInvalidSpec = "InvalidSpec"
	BaselineReasonNoClusters  = "NoClusters"
)

// Metadata the baseline controller sets.
const (
	// BaselineTaintKey is the NoSchedule taint a cluster carries until its
	// baselines' gating components are ready.
	BaselineTaintKey = "baseline.atoll.dev/not-ready"
	// BaselineLabel on a generated ClusterPropagationPolicy and on the
	// bindings it claims names the ClusterBaseline.
	BaselineLabel = "baseline.atoll.dev/name"
	// ComponentAnnotation on a generated policy and its bindings names the
	// component.
	ComponentAnnotation = "baseline.atoll.dev/component"
	// DependsOnAnnotation on a generated policy records the component's
	// dependsOn (comma-separated), so that a component removed from the
	// baseline is still withdrawn after its dependents.
	DependsOnAnnotation = "baseline.atoll.dev/depends-on"
	// ReadinessAnnotation on a baseline binding is the component's
	// readinessExpression; the executor evaluates it (or kstatus when
	// empty) on the member object.
	ReadinessAnnotation = "baseline.atoll.dev/readiness-expression"
	// AllowedRevisionsAnnotation on a baseline binding is a JSON map
	// cluster → template resourceVersion: the executor applies the
	// template to a cluster only when the map allows its current version
	// there, so a change rolls out to a cluster only after its
	// prerequisites' changes are ready there.
	AllowedRevisionsAnnotation = "baseline.atoll.dev/allowed-revisions"
	// TemplateVersionAnnotation on a baseline binding is "RV/GENERATION":
	// the template resourceVersion the binding references and the binding
	// generation at which the baseline controller first saw it. A status
	// observed at that generation or later describes that template
	// version, even when later placement writes (other clusters) bumped
	// the generation since.
	TemplateVersionAnnotation = "baseline.atoll.dev/template-version"
	// BaselineFinalizer withdraws the components in reverse dependency
	// order before the baseline goes.
	BaselineFinalizer = "baseline.atoll.dev/withdraw"
	// SchedulerName is the spec.schedulerName of baseline bindings: the
	// default scheduler leaves them alone and the baseline controller
	// places them, cluster by cluster.
	SchedulerName = "atoll-baseline"
)

func init() {
	objectTypes = append(objectTypes, &ClusterBaseline{}, &ClusterBaselineList{})
}
