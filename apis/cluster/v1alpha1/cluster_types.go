package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the Cluster resource.
const (
	ResourceKindCluster     = "Cluster"
	ResourcePluralCluster   = "clusters"
	ResourceSingularCluster = "cluster"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="MODE",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 48 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name of a Cluster must be a DNS-1123 label (lowercase letters, digits and '-') of at most 48 characters"

// Cluster is a member cluster registered with the control plane. Its name
// is the cluster's name in placements and must be a DNS-1123 label of at
// most 48 characters.
type Cluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is how the control plane reaches and describes the cluster.
	// +required
	Spec ClusterSpec `json:"spec"`

	// status is the last observed state of the cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterList is a list of Cluster.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of Cluster.
	// +required
	Items []Cluster `json:"items"`
}

// ClusterSpec is how the control plane reaches and describes a member
// cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.zone) || size(self.zone) == 0 || !has(self.zones) || size(self.zones) == 0",message="zone (deprecated) and zones cannot both be set",fieldPath=".zone"
type ClusterSpec struct {
	// id uniquely identifies the cluster, independently of the object's UID.
	// It is collected when the cluster registers: the value of the
	// ClusterProperty cluster.clusterset.k8s.io if the cluster defines one,
	// otherwise the UID of its kube-system namespace. Change it only if you
	// know what you are doing: it identifies the cluster and feeds the DNS
	// names of multi-cluster services.
	// +optional
	// +kubebuilder:validation:MaxLength=128000
	ID string `json:"id,omitempty"`

	// syncMode is how resources reach the cluster: Push (the control plane
	// applies them) or Pull (an agent in the cluster fetches them).
	// +required
	SyncMode ClusterSyncMode `json:"syncMode"`

	// apiEndpoint is the address of the cluster's API server, usually a URL
	// such as https://10.0.0.1:6443.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^\S*$`
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// secretRef names the Secret with the credentials for the cluster: a
	// bearer token under the key token and the CA bundle under caBundle.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// impersonatorSecretRef names the Secret with the token (key token) used
	// to impersonate users when proxying requests to the cluster.
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// insecureSkipTLSVerification disables verification of the cluster API
	// server's certificate. The connection is then not secure. Defaults to
	// false.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// proxyURL is an http, https or socks5 proxy through which the control
	// plane talks to the cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^((https?|socks5)://\S*)?$`
	ProxyURL string `json:"proxyURL,omitempty"`

	// proxyHeader holds HTTP headers sent to the proxy. Separate several
	// values of one header with commas, e.g. "k1": "v1,v2".
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// provider is the cloud provider of the cluster. It must be a valid label
	// value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Provider string `json:"provider,omitempty"`

	// region is the region the cluster runs in. It must be a valid label
	// value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Region string `json:"region,omitempty"`

	// zone is the zone the cluster runs in.
	// Deprecated: use zones. Cannot be combined with zones.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Zone string `json:"zone,omitempty"`

	// zones are the failure (availability) zones the cluster runs across.
	// Each must be a valid label value.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Zones []string `json:"zones,omitempty"`

	// taints keep workloads that do not tolerate them off the cluster
	// (NoSchedule) or move them away (NoExecute). Each key and effect pair
	// may appear once.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect == 'NoSchedule' || t.effect == 'NoExecute')",message="taints effect must be NoSchedule or NoExecute"
	Taints []corev1.Taint `json:"taints,omitempty"`

	// resourceModels describe the node sizes of the cluster as grades, each a
	// set of resource ranges [min, max). The scheduler counts the nodes per
	// grade to estimate how many replicas fit. When unset a default model of
	// grades 0 to 8 over cpu and memory is used. Grades must be unique, the
	// ranges of consecutive grades should be contiguous, and the max of the
	// last grade means unbounded.
	// +optional
	// +listType=map
	// +listMapKey=grade
	// +kubebuilder:validation:MaxItems=64
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// ResourceModel is one grade of node size.
type ResourceModel struct {
	// grade is the index of this model, from 0 upwards.
	// +required
	// +kubebuilder:validation:Minimum=0
	Grade int32 `json:"grade"`

	// ranges are the resource intervals of this grade; a node belongs to the
	// grade when every resource falls inside its interval.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange is the half-open interval [min, max) of one resource.
type ResourceModelRange struct {
	// name is the resource, e.g. cpu, memory, storage or ephemeral-storage.
	// +required
	Name corev1.ResourceName `json:"name"`

	// min is the inclusive lower bound. The min of the first grade is treated
	// as zero.
	// +required
	Min resource.Quantity `json:"min"`

	// max is the exclusive upper bound and must exceed min. The max of the
	// last grade means unbounded.
	// +required
	Max resource.Quantity `json:"max"`
}

// ClusterSyncMode is how resources reach a member cluster.
// +kubebuilder:validation:Enum=Push;Pull
type ClusterSyncMode string

const (
	// Push: the control plane applies resources to the cluster.
	Push ClusterSyncMode = "Push"

	// Pull: an agent in the cluster fetches resources from the control plane
	// and applies them locally.
	Pull ClusterSyncMode = "Pull"
)

// LocalSecretReference names a Secret on the control plane.
type LocalSecretReference struct {
	// namespace of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ClusterStatus is the observed state of a member cluster, refreshed
// periodically.
type ClusterStatus struct {
	// kubernetesVersion is the version of the cluster's API server.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// apiEnablements lists the group versions and resources the cluster
	// serves.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// conditions are the cluster's conditions, of types Ready and
	// CompleteAPIEnablements.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// nodeSummary counts the cluster's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// resourceSummary sums the cluster's resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// remedyActions are remedy actions to perform on the cluster, such as
	// TrafficControl.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement lists the resources the cluster serves in one group version.
type APIEnablement struct {
	// groupVersion is the group version, e.g. apps/v1 or v1.
	// +required
	// +kubebuilder:validation:MaxLength=317
	GroupVersion string `json:"groupVersion"`

	// resources are the resources served in the group version.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource names one served resource.
type APIResource struct {
	// name is the plural resource name, e.g. deployments.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kind is the resource's kind, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Kind string `json:"kind"`
}

// NodeSummary counts the nodes of a cluster.
type NodeSummary struct {
	// totalNum is the number of nodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TotalNum int32 `json:"totalNum,omitempty"`

	// readyNum is the number of Ready nodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums the resources of a cluster.
type ResourceSummary struct {
	// allocatable is the total allocatable resources of all nodes.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// allocating is the total requests of pods waiting to be scheduled.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`

	// allocated is the total requests of pods already scheduled to nodes.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`

	// allocatableModelings counts the nodes per resource model grade.
	// +optional
	// +listType=map
	// +listMapKey=grade
	// +kubebuilder:validation:MaxItems=64
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes whose allocatable resources fall
// into one resource model grade. {grade: 2, count: 10} means ten nodes are of
// grade 2.
type AllocatableModeling struct {
	// grade is the index of the resource model.
	// +required
	// +kubebuilder:validation:Minimum=0
	Grade int32 `json:"grade"`

	// count is the number of nodes of this grade.
	// +required
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

func init() {
	objectTypes = append(objectTypes, &Cluster{}, &ClusterList{})
}
