package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the ClusterOverridePolicy resource.
const (
	ResourceKindClusterOverridePolicy     = "ClusterOverridePolicy"
	ResourcePluralClusterOverridePolicy   = "clusteroverridepolicies"
	ResourceSingularClusterOverridePolicy = "clusteroverridepolicy"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusteroverridepolicies,scope=Cluster,shortName=cop,categories=karmada-io

// ClusterOverridePolicy changes the per-cluster copies of selected resources
// of any namespace and of cluster-scoped resources. ClusterOverridePolicies
// are applied before OverridePolicies, so a namespaced OverridePolicy has the
// last word.
type ClusterOverridePolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired override behaviour.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of ClusterOverridePolicy.
	// +required
	Items []ClusterOverridePolicy `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ClusterOverridePolicy{}, &ClusterOverridePolicyList{})
}
