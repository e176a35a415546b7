// Package v1alpha1 holds the apps.atoll.dev/v1alpha1 API: atoll's own
// workload operations, beside the Karmada-compatible groups. Rebalance
// drives the gradual, HPA-aware migration of one workload between member
// clusters when its target distribution changes (docs/rebalance.md).
//
// +kubebuilder:object:generate=true
// +groupName=apps.atoll.dev
package v1alpha1
