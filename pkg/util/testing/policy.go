package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// PropagationPolicyWrapper builds a PropagationPolicy (or, with ClusterObj,
// a ClusterPropagationPolicy with the same spec).
type PropagationPolicyWrapper struct {
	policyv1alpha1.PropagationPolicy
}

// MakePropagationPolicy starts PropagationPolicy namespace/name with no
// resource selectors and an empty placement (every cluster, Duplicated).
func MakePropagationPolicy(name, namespace string) *PropagationPolicyWrapper {
	return &PropagationPolicyWrapper{policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns a copy of the built PropagationPolicy.
func (w *PropagationPolicyWrapper) Obj() *policyv1alpha1.PropagationPolicy {
	return w.DeepCopy()
}

// ClusterObj returns a ClusterPropagationPolicy with the built name,
// labels, annotations and spec.
func (w *PropagationPolicyWrapper) ClusterObj() *policyv1alpha1.ClusterPropagationPolicy {
	pp := w.DeepCopy()
	cpp := &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: pp.ObjectMeta, Spec: pp.Spec}
	cpp.Namespace = ""
	return cpp
}

// Select appends a resource selector for the objects of apiVersion and
// kind, only the one called name when name is not empty.
func (w *PropagationPolicyWrapper) Select(apiVersion, kind, name string) *PropagationPolicyWrapper {
	return w.Selector(policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name})
}

// SelectLabels appends a resource selector for the objects of apiVersion
// and kind that carry labels.
func (w *PropagationPolicyWrapper) SelectLabels(apiVersion, kind string, labels map[string]string) *PropagationPolicyWrapper {
	return w.Selector(policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind,
		LabelSelector: &metav1.LabelSelector{MatchLabels: labels}})
}

// Selector appends s as it is (e.g. one with a namespace, for a
// ClusterPropagationPolicy).
func (w *PropagationPolicyWrapper) Selector(s policyv1alpha1.ResourceSelector) *PropagationPolicyWrapper {
	w.Spec.ResourceSelectors = append(w.Spec.ResourceSelectors, s)
	return w
}

// Placement sets spec.placement, e.g. from MakePlacement().….Obj().
func (w *PropagationPolicyWrapper) Placement(p *policyv1alpha1.Placement) *PropagationPolicyWrapper {
	w.Spec.Placement = *p.DeepCopy()
	return w
}

// ClusterNames sets placement.clusterAffinity to exactly these clusters.
func (w *PropagationPolicyWrapper) ClusterNames(names ...string) *PropagationPolicyWrapper {
	w.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: names}
	return w
}

// Priority sets spec.priority.
func (w *PropagationPolicyWrapper) Priority(p int32) *PropagationPolicyWrapper {
	w.Spec.Priority = ptr.To(p)
	return w
}

// PropagateDeps sets spec.propagateDeps: the selected workloads' dependencies
// follow them.
func (w *PropagationPolicyWrapper) PropagateDeps() *PropagationPolicyWrapper {
	w.Spec.PropagateDeps = true
	return w
}

// ConflictResolution sets spec.conflictResolution.
func (w *PropagationPolicyWrapper) ConflictResolution(c policyv1alpha1.ConflictResolution) *PropagationPolicyWrapper {
	w.Spec.ConflictResolution = c
	return w
}

// PreserveResourcesOnDeletion sets spec.preserveResourcesOnDeletion.
func (w *PropagationPolicyWrapper) PreserveResourcesOnDeletion() *PropagationPolicyWrapper {
	w.Spec.PreserveResourcesOnDeletion = ptr.To(true)
	return w
}
