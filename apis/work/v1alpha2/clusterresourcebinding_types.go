package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the ClusterResourceBinding resource.
const (
	ResourceKindClusterResourceBinding     = "ClusterResourceBinding"
	ResourcePluralClusterResourceBinding   = "clusterresourcebindings"
	ResourceSingularClusterResourceBinding = "clusterresourcebinding"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcebindings,scope=Cluster,shortName=crb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceBinding binds one cluster-scoped resource template to the
// ClusterPropagationPolicy that claimed it. Namespaced templates always get a
// ResourceBinding, whichever kind of policy claimed them.
type ClusterResourceBinding struct {
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

// ClusterResourceBindingList is a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of ClusterResourceBinding.
	// +required
	Items []ClusterResourceBinding `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ClusterResourceBinding{}, &ClusterResourceBindingList{})
}
