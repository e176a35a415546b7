package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// OverridePolicyWrapper builds an OverridePolicy (or, with ClusterObj, a
// ClusterOverridePolicy with the same spec).
type OverridePolicyWrapper struct {
	policyv1alpha1.OverridePolicy
}

// MakeOverridePolicy starts OverridePolicy namespace/name with no resource
// selectors (every template in its namespace) and no rules.
func MakeOverridePolicy(name, namespace string) *OverridePolicyWrapper {
	return &OverridePolicyWrapper{policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns a copy of the built OverridePolicy.
func (w *OverridePolicyWrapper) Obj() *policyv1alpha1.OverridePolicy {
	return w.DeepCopy()
}

// ClusterObj returns a ClusterOverridePolicy with the built name, labels,
// annotations and spec.
func (w *OverridePolicyWrapper) ClusterObj() *policyv1alpha1.ClusterOverridePolicy {
	op := w.DeepCopy()
	cop := &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: op.ObjectMeta, Spec: op.Spec}
	cop.Namespace = ""
	return cop
}

// Select appends a resource selector for the objects of apiVersion and
// kind, only the one called name when name is not empty.
func (w *OverridePolicyWrapper) Select(apiVersion, kind, name string) *OverridePolicyWrapper {
	return w.Selector(policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name})
}

// Selector appends s as it is (e.g. one with a namespace, for a
// ClusterOverridePolicy).
func (w *OverridePolicyWrapper) Selector(s policyv1alpha1.ResourceSelector) *OverridePolicyWrapper {
	w.Spec.ResourceSelectors = append(w.Spec.ResourceSelectors, s)
	return w
}

// Rule appends an override rule: overriders for the clusters target
// selects (nil: every cluster).
func (w *OverridePolicyWrapper) Rule(target *policyv1alpha1.ClusterAffinity, overriders policyv1alpha1.Overriders) *OverridePolicyWrapper {
	w.Spec.OverrideRules = append(w.Spec.OverrideRules, policyv1alpha1.RuleWithCluster{TargetCluster: target, Overriders: overriders})
	return w
}
