package v1alpha1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// Tenant is a team's room in a shared control plane. Its subjects may
// write PropagationPolicies and OverridePolicies only in its namespaces;
// those policies select only the tenant's templates, place them only on
// the tenant's clusters and override only the tenant's objects. Admission
// refuses what steps outside, and the detector, scheduler and executor
// enforce the same boundary again. Users who are no tenant's subject are
// platform admins and keep Karmada's behaviour.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=tnt,categories=atoll
// +kubebuilder:printcolumn:name="NAMESPACES",type=string,JSONPath=`.status.summary.namespaces`
// +kubebuilder:printcolumn:name="CLUSTERS",type=string,JSONPath=`.status.summary.clusters`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares who the tenant is and where it may act.
	// +required
	Spec TenantSpec `json:"spec"`

	// status is the boundary as resolved now: the clusters it holds and the
	// namespaces it shares.
	// +optional
	Status TenantStatus `json:"status,omitempty"`
}

// TenantSpec is a tenant's boundary.
type TenantSpec struct {
	// subjects are the tenant's identities: users, groups and service
	// accounts (rbac/v1 Subjects, apiGroup optional). A request made by
	// any of them is held to this tenant's boundary.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="self.all(s, s.kind in ['User', 'Group', 'ServiceAccount'])",message="subjects[].kind must be User, Group or ServiceAccount"
	// +kubebuilder:validation:XValidation:rule="self.all(s, s.kind != 'ServiceAccount' || (has(s.namespace) && s.namespace != ''))",message="subjects[].namespace is required for a ServiceAccount"
	// +kubebuilder:validation:XValidation:rule="self.all(s, s.name != '')",message="subjects[].name must not be empty"
	Subjects []rbacv1.Subject `json:"subjects"`

	// namespaces are where the tenant's subjects may write policies. A
	// namespace listed by several tenants is shared: there each tenant's
	// templates are the ones its resourceSelector matches.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespaces []string `json:"namespaces"`

	// clusters is the tenant's cluster set, in Karmada's ClusterAffinity
	// form (clusterNames, labelSelector, fieldSelector, exclude); an empty
	// one holds every cluster. The tenant's policies never place on a
	// cluster outside it, whatever their own affinity matches, and a
	// cluster that joins later is held to it too.
	// +required
	// +kubebuilder:validation:XValidation:rule="!has(self.labelSelector) || !has(self.labelSelector.matchExpressions) || self.labelSelector.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) ? (has(e.values) && size(e.values) > 0) : (e.operator in ['Exists', 'DoesNotExist'] && (!has(e.values) || size(e.values) == 0)))",message="clusters.labelSelector.matchExpressions: operator must be In or NotIn with values, or Exists or DoesNotExist without values"
	Clusters policyv1alpha1.ClusterAffinity `json:"clusters"`

	// resourceSelector says which templates are the tenant's in the
	// namespaces it shares with other tenants (its own namespaces hold only
	// its templates). Without one the tenant selects nothing in a shared
	// namespace, and its status says so.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) ? (has(e.values) && size(e.values) > 0) : (e.operator in ['Exists', 'DoesNotExist'] && (!has(e.values) || size(e.values) == 0)))",message="resourceSelector.matchExpressions: operator must be In or NotIn with values, or Exists or DoesNotExist without values"
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="resourceSelector must not be empty: an empty selector would claim every template of a shared namespace"
	ResourceSelector *metav1.LabelSelector `json:"resourceSelector,omitempty"`
}

// TenantStatus is the boundary as the tenant controller resolved it; the
// admission policies read it (CEL cannot list clusters or other tenants).
type TenantStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// clusters are the names of the clusters in the tenant's cluster set
	// now, sorted.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MaxLength=253
	Clusters []string `json:"clusters,omitempty"`

	// sharedNamespaces are the tenant's namespaces that other tenants list
	// too, sorted.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	SharedNamespaces []string `json:"sharedNamespaces,omitempty"`

	// summary feeds the printer columns.
	// +optional
	Summary TenantSummary `json:"summary,omitempty"`

	// conditions: Ready says whether the boundary is complete and
	// unambiguous (reasons Ready, InvalidSelector, SharedWithoutSelector,
	// SubjectInSeveralTenants).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TenantSummary is the tenant in printer-column form.
type TenantSummary struct {
	// namespaces joins spec.namespaces, shared ones marked with "*".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Namespaces string `json:"namespaces,omitempty"`

	// clusters joins status.clusters.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Clusters string `json:"clusters,omitempty"`
}

// ConditionReady is the Tenant condition that says whether its boundary is
// complete and unambiguous.
const ConditionReady = "Ready"

// Annotations atoll's admission policies write on PropagationPolicies and
// OverridePolicies (and ClusterPropagationPolicies, ClusterOverridePolicies
// for the creator) created while at least one Tenant exists.
const (
	// CreatorAnnotation records the user that created the policy.
	CreatorAnnotation = "policy.atoll.dev/creator"
	// TenantAnnotation records the tenant the policy belongs to: the
	// creator's tenant, or the one a platform admin assigns. Only the
	// tenant's own subjects (and admins) may change or delete the policy;
	// in a shared namespace it says whose boundary the policy acts in.
	TenantAnnotation = "policy.atoll.dev/tenant"
)

// TenantList is a list of Tenants.
//
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Tenant{}, &TenantList{})
}
