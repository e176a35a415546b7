package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the ClusterPropagationPolicy resource.
const (
	ResourceKindClusterPropagationPolicy     = "ClusterPropagationPolicy"
	ResourcePluralClusterPropagationPolicy   = "clusterpropagationpolicies"
	ResourceSingularClusterPropagationPolicy = "clusterpropagationpolicy"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterpropagationpolicies,scope=Cluster,shortName=cpp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterPropagationPolicy places selected cluster-scoped resources, and
// namespaced resources of any namespace, onto member clusters. For a
// namespaced resource a matching PropagationPolicy is preferred over any
// ClusterPropagationPolicy.
type ClusterPropagationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired propagation behaviour.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicy.
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of ClusterPropagationPolicy.
	// +required
	Items []ClusterPropagationPolicy `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ClusterPropagationPolicy{}, &ClusterPropagationPolicyList{})
}
