package testing

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
)

// TenantWrapper builds a Tenant.
type TenantWrapper struct{ tenancyv1alpha1.Tenant }

// MakeTenant starts a Tenant with no subjects, namespaces or clusters.
func MakeTenant(name string) *TenantWrapper {
	return &TenantWrapper{tenancyv1alpha1.Tenant{
		TypeMeta:   metav1.TypeMeta{APIVersion: tenancyv1alpha1.GroupVersion.String(), Kind: "Tenant"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// Obj returns a copy of the Tenant.
func (w *TenantWrapper) Obj() *tenancyv1alpha1.Tenant { return w.DeepCopy() }

// ServiceAccount adds ServiceAccount namespace/name as a subject.
func (w *TenantWrapper) ServiceAccount(namespace, name string) *TenantWrapper {
	w.Spec.Subjects = append(w.Spec.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name})
	return w
}

// Group adds group name as a subject.
func (w *TenantWrapper) Group(name string) *TenantWrapper {
	w.Spec.Subjects = append(w.Spec.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name})
	return w
}

// Namespaces sets the tenant's namespaces.
func (w *TenantWrapper) Namespaces(namespaces ...string) *TenantWrapper {
	w.Spec.Namespaces = namespaces
	return w
}

// ClusterNames sets the tenant's cluster set to the named clusters.
func (w *TenantWrapper) ClusterNames(names ...string) *TenantWrapper {
	w.Spec.Clusters.ClusterNames = names
	return w
}

// Labels sets the labels of the tenant's templates in shared namespaces.
func (w *TenantWrapper) Labels(labels map[string]string) *TenantWrapper {
	w.Spec.ResourceSelector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}
