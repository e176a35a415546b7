package detector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// This file is the pure matching logic: which policy a resource template
// belongs to. It follows Karmada (pkg/util/selector.go,
// pkg/detector/compare.go, pkg/detector/detector.go propagateResource)
// without preemption.

// ImplicitPriority is how specifically a resource selector matches a
// template. Higher is more specific; a policy's implicit priority for a
// template is that of its best matching selector.
type ImplicitPriority int

// Implicit priorities, as Karmada's util.ImplicitPriority.
const (
	PriorityMisMatch ImplicitPriority = iota
	PriorityMatchAll
	PriorityMatchLabelSelector
	PriorityMatchName
)

// Template is what matching needs to know about a resource template.
type Template struct {
	// APIVersion is group/version of the template as the detector watches
	// it (the control plane's preferred version of the resource).
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Labels     map[string]string
}

// Policy is a PropagationPolicy (Cluster false) or a
// ClusterPropagationPolicy (Cluster true) as matching sees it.
type Policy struct {
	Cluster   bool
	Namespace string
	Name      string
	// PermanentID is the policy's permanent-id label; empty until the
	// detector has labelled the policy.
	PermanentID string
	// Deleting is true once the policy has a deletionTimestamp; a deleting
	// policy matches nothing (as in Karmada).
	Deleting bool
	// WithdrawOnRelease: the policy opted into withdrawing the templates it
	// lets go (policyv1alpha1.WithdrawOnReleaseAnnotation).
	WithdrawOnRelease bool
	// Tenant is the policy's policy.atoll.dev/tenant record (which tenant
	// it acts for in a shared namespace).
	Tenant string
	// AutoProvision marks namespaceAutoProvision, the placement of
	// namespaces no policy claims; no policy object stands behind it.
	AutoProvision bool
	Spec          *policyv1alpha1.PropagationSpec
}

// Claim is the policy a template is currently claimed by, as recorded in the
// template's claim label and annotations.
type Claim struct {
	Cluster     bool
	Namespace   string
	Name        string
	PermanentID string
}

// Is reports whether p is the policy this claim names.
func (c *Claim) Is(p *Policy) bool {
	return c != nil && p != nil && c.Cluster == p.Cluster && c.Namespace == p.Namespace &&
		c.Name == p.Name && c.PermanentID != "" && c.PermanentID == p.PermanentID
}

// SelectorPriority is how the selector matches the template. The group of
// apiVersion and the kind must equal the template's (any version: a
// template is one object whichever served version it is read at), and
// namespace when set; then a set name
// must equal the template's (labelSelector is then ignored), else a set
// labelSelector must match its labels, else the selector matches every
// template of the kind.
func SelectorPriority(t Template, s policyv1alpha1.ResourceSelector) ImplicitPriority {
	if s.Kind != t.Kind || !sameGroup(s.APIVersion, t.APIVersion) {
		return PriorityMisMatch
	}
	if s.Namespace != "" && s.Namespace != t.Namespace {
		return PriorityMisMatch
	}
	if s.Name != "" {
		if s.Name == t.Name {
			return PriorityMatchName
		}
		return PriorityMisMatch
	}
	if s.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		if err != nil {
			// The API validates selectors; an invalid one matches nothing.
			return PriorityMisMatch
		}
		if sel.Matches(labels.Set(t.Labels)) {
			return PriorityMatchLabelSelector
		}
		return PriorityMisMatch
	}
	return PriorityMatchAll
}

// PolicyPriority is the implicit priority of p for t: that of its best
// matching selector, or PriorityMisMatch. A PropagationPolicy only matches
// templates of its own namespace (never cluster-scoped ones); a deleting
// policy matches nothing.
func PolicyPriority(t Template, p *Policy) ImplicitPriority {
	if p == nil || p.Spec == nil || p.Deleting {
		return PriorityMisMatch
	}
	if !p.Cluster && (t.Namespace == "" || t.Namespace != p.Namespace) {
		return PriorityMisMatch
	}
	best := PriorityMisMatch
	for _, s := range p.Spec.ResourceSelectors {
		if pr := SelectorPriority(t, s); pr > best {
			best = pr
		}
	}
	return best
}

// explicitPriority is spec.priority, 0 when unset.
func explicitPriority(p *Policy) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

// better reports whether policy a (matching with implicit priority ia) wins
// over policy b (matching with ib) for the same template: any
// PropagationPolicy beats every ClusterPropagationPolicy; then the higher
// spec.priority; then the higher implicit priority; then the lower name.
func better(a *Policy, ia ImplicitPriority, b *Policy, ib ImplicitPriority) bool {
	if a.Cluster != b.Cluster {
		return !a.Cluster
	}
	if pa, pb := explicitPriority(a), explicitPriority(b); pa != pb {
		return pa > pb
	}
	if ia != ib {
		return ia > ib
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	// Two PropagationPolicies of the same name are the same policy; keep the
	// order deterministic anyway.
	return a.Namespace < b.Namespace
}

// Decision is the outcome of Choose.
type Decision struct {
	// Policy is the policy the template belongs to, nil when none matches.
	Policy *Policy
	// Kept is true when Policy is the policy that already claimed the
	// template.
	Kept bool
}

// Choose decides which policy a template belongs to.
//
// A template that is claimed by a policy stays with it as long as that
// policy exists (same permanent id), is not being deleted and still matches
// the template, even when another policy would now win: atoll does not
// implement preemption (Karmada's default, preemption: Never; a policy's
// preemption: Always is ignored). Otherwise the best matching policy among
// candidates wins, see better. Candidates may include policies that do not
// match; they are skipped.
func Choose(t Template, claim *Claim, candidates []*Policy) Decision {
	if claim != nil {
		for _, p := range candidates {
			if claim.Is(p) && PolicyPriority(t, p) > PriorityMisMatch {
				return Decision{Policy: p, Kept: true}
			}
		}
	}
	var best *Policy
	var bestPriority ImplicitPriority
	for _, p := range candidates {
		pr := PolicyPriority(t, p)
		if pr == PriorityMisMatch {
			continue
		}
		if best == nil || better(p, pr, best, bestPriority) {
			best, bestPriority = p, pr
		}
	}
	return Decision{Policy: best}
}

// sameGroup reports whether two apiVersions are of the same API group.
func sameGroup(a, b string) bool {
	ga, errA := schema.ParseGroupVersion(a)
	gb, errB := schema.ParseGroupVersion(b)
	return errA == nil && errB == nil && ga.Group == gb.Group
}
