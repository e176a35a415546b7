// Package v1alpha1 holds the policy.karmada.io/v1alpha1 API served by atoll:
// PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and
// ClusterOverridePolicy.
//
// The group, version, kinds, JSON field names, enum values and defaults are
// those of Karmada v1.19, so manifests written for Karmada apply unchanged.
// Invariants that Karmada checks in its validating webhook are expressed here
// as OpenAPI and CEL rules in the generated CRDs, because atoll runs no
// admission webhooks. Defaults that Karmada sets in its mutating webhook and
// that a CRD cannot express (for example gracePeriodSeconds=600 when
// purgeMode is Gracefully) are applied by the controllers that read the field.
//
// +kubebuilder:object:generate=true
// +groupName=policy.karmada.io
package v1alpha1
