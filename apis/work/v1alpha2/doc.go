// Package v1alpha2 holds the work.karmada.io/v1alpha2 API served by atoll:
// ResourceBinding and ClusterResourceBinding, the per-template objects that
// carry scheduling intent, the scheduling result and the aggregated status.
//
// Karmada also serves work.karmada.io/v1alpha1 bindings through a conversion
// webhook. atoll serves only v1alpha2 (the storage version in Karmada) and
// runs no conversion webhook; clients must use v1alpha2. The Work kind of
// work.karmada.io/v1alpha1 is not served: atoll applies bindings to member
// clusters directly.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha2
