// Package v1alpha1 holds the cluster.karmada.io/v1alpha1 API served by atoll:
// the Cluster kind, which registers a member cluster.
//
// Karmada serves this group from an aggregated API server; atoll serves it
// as a CustomResourceDefinition with the same group, version, kind, JSON
// field names and enum values. The /proxy subresource of Karmada's Cluster
// is not part of the CRD.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.karmada.io
package v1alpha1
