package tenancy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// Condition reasons of a Tenant's Ready condition.
const (
	ReasonReady                   = "Ready"
	ReasonInvalidSelector         = "InvalidSelector"
	ReasonSharedWithoutSelector   = "SharedWithoutSelector"
	ReasonSubjectInSeveralTenants = "SubjectInSeveralTenants"
)

// Status resolves t's status: its cluster set now, the namespaces it
// shares, and whether its boundary is complete and unambiguous. It keeps
// the conditions' transition times of old (now stamps a transition).
// clusters may be in any order.
func (s *Set) Status(t *tenancyv1alpha1.Tenant, clusters []*clusterv1alpha1.Cluster, old tenancyv1alpha1.TenantStatus, now metav1.Time) tenancyv1alpha1.TenantStatus {
	st := tenancyv1alpha1.TenantStatus{ObservedGeneration: t.Generation, Conditions: slices.Clone(old.Conditions)}
	var problems []string
	reason := ReasonReady

	for _, c := range clusters {
		ok, err := clusteraffinity.Matches(c, &t.Spec.Clusters)
		if err != nil {
			reason = ReasonInvalidSelector
			problems = append(problems, fmt.Sprintf("spec.clusters: %v; the tenant reaches no cluster until it is fixed", err))
			st.Clusters = nil
			break
		}
		if ok {
			st.Clusters = append(st.Clusters, c.Name)
		}
	}
	sort.Strings(st.Clusters)

	if t.Spec.ResourceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(t.Spec.ResourceSelector); err != nil {
			reason = ReasonInvalidSelector
			problems = append(problems, fmt.Sprintf("spec.resourceSelector: %v; the tenant selects nothing in shared namespaces until it is fixed", err))
		}
	}

	var marked []string
	for _, ns := range t.Spec.Namespaces {
		if s.Shared(ns) {
			st.SharedNamespaces = append(st.SharedNamespaces, ns)
			marked = append(marked, ns+"*")
			if t.Spec.ResourceSelector == nil {
				if reason == ReasonReady {
					reason = ReasonSharedWithoutSelector
				}
				others := slices.DeleteFunc(slices.Clone(s.TenantsOf(ns)), func(n string) bool { return n == t.Name })
				problems = append(problems, fmt.Sprintf("namespace %s is also listed by %s and spec.resourceSelector is not set: the tenant's policies select nothing there",
					ns, strings.Join(others, ", ")))
			}
		} else {
			marked = append(marked, ns)
		}
	}
	sort.Strings(st.SharedNamespaces)

	for _, subj := range t.Spec.Subjects {
		var others []string
		for _, name := range s.names() {
			if name != t.Name && slices.ContainsFunc(s.tenants[name].Spec.Subjects, func(o rbacv1.Subject) bool { return SameSubject(o, subj) }) {
				others = append(others, name)
			}
		}
		if len(others) > 0 {
			if reason == ReasonReady {
				reason = ReasonSubjectInSeveralTenants
			}
			problems = append(problems, fmt.Sprintf("%s %s is also a subject of %s: its requests must satisfy every one of them",
				subj.Kind, subjectName(subj), strings.Join(others, ", ")))
		}
	}

	st.Summary = tenancyv1alpha1.TenantSummary{Namespaces: text.Truncate(strings.Join(marked, ","), 1024), Clusters: text.Truncate(strings.Join(st.Clusters, ","), 1024)}
	cond := metav1.Condition{Type: tenancyv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady,
		ObservedGeneration: t.Generation, LastTransitionTime: now,
		Message: fmt.Sprintf("%d namespace(s), %d cluster(s) in the cluster set", len(t.Spec.Namespaces), len(st.Clusters))}
	if len(problems) > 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, text.Truncate(strings.Join(problems, "; "), 32768)
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	return st
}

func (s *Set) names() []string {
	out := make([]string, 0, len(s.tenants))
	for n := range s.tenants {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SameSubject reports whether a and b name the same identity (apiGroup is
// not compared: it is implied by the kind).
func SameSubject(a, b rbacv1.Subject) bool {
	return a.Kind == b.Kind && a.Name == b.Name && (a.Kind != rbacv1.ServiceAccountKind || a.Namespace == b.Namespace)
}

func subjectName(s rbacv1.Subject) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		return s.Namespace + "/" + s.Name
	}
	return s.Name
}
