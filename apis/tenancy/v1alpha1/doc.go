// Package v1alpha1 holds the policy.atoll.dev/v1alpha1 API: permission
// boundaries between teams sharing one control plane. A Tenant names a
// team's identities, the namespaces it writes policies in, the clusters
// its policies may reach and, in namespaces it shares with other teams,
// the labels its templates carry (docs/tenancy.md). The directory is
// named after the domain: policy.karmada.io already lives in apis/policy.
//
// +kubebuilder:object:generate=true
// +groupName=policy.atoll.dev
package v1alpha1
