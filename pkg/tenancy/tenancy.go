// Package tenancy decides what a team's policies may reach: the one place
// the detector, the scheduler and the executor ask, so that a boundary the
// admission policies (pkg/admission) refuse to cross is also never crossed
// by a policy written while they were off.
//
// A namespaced policy acts for a tenant chosen from what platform admins
// control, never from what a policy's author writes alone:
//
//   - in a namespace exactly one Tenant lists, for that tenant, whoever
//     wrote the policy;
//   - in a namespace several Tenants list (shared), for the tenant its
//     policy.atoll.dev/tenant record names, if that tenant lists the
//     namespace; without such a record it acts on nothing;
//   - in a namespace no Tenant lists, for nobody: a platform admin's
//     policy, unbounded, as in Karmada.
//
// Cluster-scoped policies are platform admins' (tenants cannot create
// them) and are unbounded.
package tenancy

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
)

// Set is a snapshot of every Tenant, indexed by namespace.
type Set struct {
	tenants     map[string]*tenancyv1alpha1.Tenant
	byNamespace map[string][]string // namespace -> tenant names, sorted
}

// NewSet indexes tenants; the slice's elements are referenced, not copied.
func NewSet(tenants []tenancyv1alpha1.Tenant) *Set {
	s := &Set{tenants: map[string]*tenancyv1alpha1.Tenant{}, byNamespace: map[string][]string{}}
	for i := range tenants {
		t := &tenants[i]
		if t.DeletionTimestamp != nil {
			continue
		}
		s.tenants[t.Name] = t
		for _, ns := range t.Spec.Namespaces {
			s.byNamespace[ns] = append(s.byNamespace[ns], t.Name)
		}
	}
	for _, names := range s.byNamespace {
		sort.Strings(names)
	}
	return s
}

// Empty reports whether no Tenant exists: everything behaves as Karmada.
func (s *Set) Empty() bool { return s == nil || len(s.tenants) == 0 }

// Get returns the named tenant, nil when it does not exist.
func (s *Set) Get(name string) *tenancyv1alpha1.Tenant {
	if s == nil {
		return nil
	}
	return s.tenants[name]
}

// TenantsOf lists the tenants that list namespace, sorted by name.
func (s *Set) TenantsOf(namespace string) []string {
	if s == nil {
		return nil
	}
	return s.byNamespace[namespace]
}

// Shared reports whether several tenants list namespace.
func (s *Set) Shared(namespace string) bool { return len(s.TenantsOf(namespace)) > 1 }

// Boundary is what one policy may reach. The zero value is unbounded (a
// platform admin's policy).
type Boundary struct {
	// Tenant is the tenant the policy acts for; nil when unbounded or
	// closed.
	Tenant *tenancyv1alpha1.Tenant
	// Closed, with Reason, is a policy that may reach nothing: one in a
	// shared namespace without a record of which tenant it is.
	Closed bool
	Reason string

	set *Set
}

// Bounded reports whether the policy is held to a tenant's boundary.
func (b Boundary) Bounded() bool { return b.Tenant != nil || b.Closed }

// Name is the tenant's name ("" when unbounded or closed).
func (b Boundary) Name() string {
	if b.Tenant == nil {
		return ""
	}
	return b.Tenant.Name
}

// ForPolicy is the boundary of a namespaced policy (PropagationPolicy or
// OverridePolicy) in namespace with annotations.
func (s *Set) ForPolicy(namespace string, annotations map[string]string) Boundary {
	tenants := s.TenantsOf(namespace)
	switch {
	case len(tenants) == 0:
		return Boundary{}
	case len(tenants) == 1:
		return Boundary{Tenant: s.tenants[tenants[0]], set: s}
	}
	if rec := annotations[tenancyv1alpha1.TenantAnnotation]; slices.Contains(tenants, rec) {
		return Boundary{Tenant: s.tenants[rec], set: s}
	}
	return Boundary{Closed: true, set: s, Reason: fmt.Sprintf(
		"namespace %s is shared by tenants %s and the policy has no %s annotation naming one of them; it acts on nothing",
		namespace, strings.Join(tenants, ", "), tenancyv1alpha1.TenantAnnotation)}
}

// OwnsTemplate reports whether a template in namespace with labels is
// within the boundary, and when not, why.
func (b Boundary) OwnsTemplate(namespace string, templateLabels map[string]string) (bool, string) {
	switch {
	case !b.Bounded():
		return true, ""
	case b.Closed:
		return false, b.Reason
	}
	return b.set.Owns(b.Tenant, namespace, templateLabels)
}

// Owns reports whether the template in namespace with templateLabels is
// t's: in one of t's namespaces and, where that namespace is shared,
// matched by t's resourceSelector.
func (s *Set) Owns(t *tenancyv1alpha1.Tenant, namespace string, templateLabels map[string]string) (bool, string) {
	if !slices.Contains(t.Spec.Namespaces, namespace) {
		return false, fmt.Sprintf("namespace %s is not tenant %s's", namespace, t.Name)
	}
	if !s.Shared(namespace) {
		return true, ""
	}
	if t.Spec.ResourceSelector == nil {
		return false, fmt.Sprintf("namespace %s is shared and tenant %s has no resourceSelector", namespace, t.Name)
	}
	sel, err := metav1.LabelSelectorAsSelector(t.Spec.ResourceSelector)
	if err != nil {
		return false, fmt.Sprintf("tenant %s's resourceSelector is invalid: %v", t.Name, err)
	}
	if !sel.Matches(labels.Set(templateLabels)) {
		return false, fmt.Sprintf("in shared namespace %s the template does not carry tenant %s's labels (%s)", namespace, t.Name, sel)
	}
	return true, ""
}

// AllowsCluster reports whether cluster is in the boundary's cluster set.
// A closed boundary allows none; an invalid cluster set allows none.
func (b Boundary) AllowsCluster(cluster *clusterv1alpha1.Cluster) bool {
	switch {
	case !b.Bounded():
		return true
	case b.Closed:
		return false
	}
	return InClusterSet(b.Tenant, cluster)
}

// InClusterSet reports whether cluster is in t's cluster set (false when
// the set's selectors are invalid: the boundary fails closed).
func InClusterSet(t *tenancyv1alpha1.Tenant, cluster *clusterv1alpha1.Cluster) bool {
	ok, err := clusteraffinity.Matches(cluster, &t.Spec.Clusters)
	return err == nil && ok
}

// Load reads every Tenant through c (a cache, in the controllers). A
// control plane whose Tenant CRD is not installed has no tenants: it
// behaves as before tenancy existed.
func Load(ctx context.Context, c client.Reader) (*Set, error) {
	var list tenancyv1alpha1.TenantList
	if err := c.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		if meta.IsNoMatchError(err) {
			return NewSet(nil), nil
		}
		return nil, fmt.Errorf("listing tenants: %w", err)
	}
	return NewSet(list.Items), nil
}

// NamespacesOf is the set of namespaces the given Tenants list (anything
// else is skipped): where a change of those Tenants can change what a
// policy may reach.
func NamespacesOf(objs ...any) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if t, ok := o.(*tenancyv1alpha1.Tenant); ok {
			for _, ns := range t.Spec.Namespaces {
				out[ns] = true
			}
		}
	}
	return out
}
