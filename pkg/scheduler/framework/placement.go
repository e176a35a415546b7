package framework

import (
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// ReplicaSchedulingType is the placement's replica scheduling type with
// Karmada's defaults: no replicaScheduling means Duplicated; an empty type
// inside replicaScheduling means Divided (the CRD default).
func ReplicaSchedulingType(p *policyv1alpha1.Placement) policyv1alpha1.ReplicaSchedulingType {
	if p == nil || p.ReplicaScheduling == nil {
		return policyv1alpha1.ReplicaSchedulingTypeDuplicated
	}
	if p.ReplicaScheduling.ReplicaSchedulingType == "" {
		return policyv1alpha1.ReplicaSchedulingTypeDivided
	}
	return p.ReplicaScheduling.ReplicaSchedulingType
}

// DivisionPreference is the division preference of a Divided placement,
// Weighted when unset (Karmada's webhook default).
func DivisionPreference(p *policyv1alpha1.Placement) policyv1alpha1.ReplicaDivisionPreference {
	if p == nil || p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaDivisionPreference == "" {
		return policyv1alpha1.ReplicaDivisionPreferenceWeighted
	}
	return p.ReplicaScheduling.ReplicaDivisionPreference
}

// IsStaticWeighted reports whether replicas are divided by static weights
// (or equal weights): Divided, Weighted, without dynamicWeight.
func IsStaticWeighted(p *policyv1alpha1.Placement) bool {
	if ReplicaSchedulingType(p) != policyv1alpha1.ReplicaSchedulingTypeDivided ||
		DivisionPreference(p) != policyv1alpha1.ReplicaDivisionPreferenceWeighted {
		return false
	}
	wp := p.ReplicaScheduling.WeightPreference
	return wp == nil || wp.DynamicWeight == ""
}
