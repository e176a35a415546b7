package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// Small builders for matching tests.

func deployment(ns, name string, labels map[string]string) Template {
	return Template{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name, Labels: labels}
}

func sel(apiVersion, kind string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind}
}

func byName(apiVersion, kind, name string) policyv1alpha1.ResourceSelector {
	s := sel(apiVersion, kind)
	s.Name = name
	return s
}

func byLabel(apiVersion, kind string, labels map[string]string) policyv1alpha1.ResourceSelector {
	s := sel(apiVersion, kind)
	s.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	return s
}

func pp(ns, name string, priority int32, selectors ...policyv1alpha1.ResourceSelector) *Policy {
	return &Policy{Namespace: ns, Name: name, PermanentID: "id-" + ns + "-" + name,
		Spec: &policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Priority: &priority}}
}

func cpp(name string, priority int32, selectors ...policyv1alpha1.ResourceSelector) *Policy {
	return &Policy{Cluster: true, Name: name, PermanentID: "id-" + name,
		Spec: &policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Priority: &priority}}
}

func claimFor(p *Policy) *Claim {
	return &Claim{Cluster: p.Cluster, Namespace: p.Namespace, Name: p.Name, PermanentID: p.PermanentID}
}

func TestSelectorPriority(t *testing.T) {
	app := map[string]string{"app": "nginx"}
	cases := map[string]struct {
		template Template
		selector policyv1alpha1.ResourceSelector
		want     ImplicitPriority
	}{
		"kind only":            {deployment("ns", "nginx", nil), sel("apps/v1", "Deployment"), PriorityMatchAll},
		"other kind":           {deployment("ns", "nginx", nil), sel("apps/v1", "StatefulSet"), PriorityMisMatch},
		"another version":      {deployment("ns", "nginx", nil), sel("apps/v1beta1", "Deployment"), PriorityMatchAll},
		"other group":          {deployment("ns", "nginx", nil), sel("extensions/v1beta1", "Deployment"), PriorityMisMatch},
		"group missing":        {deployment("ns", "nginx", nil), sel("v1", "Deployment"), PriorityMisMatch},
		"name":                 {deployment("ns", "nginx", nil), byName("apps/v1", "Deployment", "nginx"), PriorityMatchName},
		"other name":           {deployment("ns", "nginx", nil), byName("apps/v1", "Deployment", "web"), PriorityMisMatch},
		"labels":               {deployment("ns", "nginx", app), byLabel("apps/v1", "Deployment", app), PriorityMatchLabelSelector},
		"labels mismatch":      {deployment("ns", "nginx", map[string]string{"app": "web"}), byLabel("apps/v1", "Deployment", app), PriorityMisMatch},
		"labels on unlabelled": {deployment("ns", "nginx", nil), byLabel("apps/v1", "Deployment", app), PriorityMisMatch},
		"empty label selector": {deployment("ns", "nginx", nil), byLabel("apps/v1", "Deployment", nil), PriorityMatchLabelSelector},
		"name wins over labels": {deployment("ns", "nginx", nil), func() policyv1alpha1.ResourceSelector {
			s := byLabel("apps/v1", "Deployment", app)
			s.Name = "nginx"
			return s
		}(), PriorityMatchName},
		"name set, labels ignored": {deployment("ns", "nginx", app), func() policyv1alpha1.ResourceSelector {
			s := byLabel("apps/v1", "Deployment", app)
			s.Name = "web"
			return s
		}(), PriorityMisMatch},
		"namespace equal": {deployment("ns", "nginx", nil), func() policyv1alpha1.ResourceSelector {
			s := sel("apps/v1", "Deployment")
			s.Namespace = "ns"
			return s
		}(), PriorityMatchAll},
		"namespace differs": {deployment("ns", "nginx", nil), func() policyv1alpha1.ResourceSelector {
			s := sel("apps/v1", "Deployment")
			s.Namespace = "other"
			return s
		}(), PriorityMisMatch},
		"namespace on cluster-scoped": {Template{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"},
			func() policyv1alpha1.ResourceSelector {
				s := sel("rbac.authorization.k8s.io/v1", "ClusterRole")
				s.Namespace = "ns"
				return s
			}(), PriorityMisMatch},
		"invalid label selector": {deployment("ns", "nginx", app), policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment",
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}}, PriorityMisMatch},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SelectorPriority(tc.template, tc.selector); got != tc.want {
				t.Errorf("SelectorPriority = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPolicyPriority(t *testing.T) {
	app := map[string]string{"app": "nginx"}
	deleting := pp("ns", "gone", 0, byName("apps/v1", "Deployment", "nginx"))
	deleting.Deleting = true
	cases := map[string]struct {
		template Template
		policy   *Policy
		want     ImplicitPriority
	}{
		"best selector counts": {deployment("ns", "nginx", app),
			pp("ns", "p", 0, sel("apps/v1", "Deployment"), byName("apps/v1", "Deployment", "nginx"), byLabel("apps/v1", "Deployment", app)), PriorityMatchName},
		"pp other namespace":      {deployment("other", "nginx", nil), pp("ns", "p", 0, sel("apps/v1", "Deployment")), PriorityMisMatch},
		"pp never cluster-scoped": {Template{APIVersion: "v1", Kind: "Namespace", Name: "ns"}, pp("ns", "p", 0, sel("v1", "Namespace")), PriorityMisMatch},
		"cpp any namespace":       {deployment("other", "nginx", nil), cpp("c", 0, sel("apps/v1", "Deployment")), PriorityMatchAll},
		"cpp cluster-scoped":      {Template{APIVersion: "v1", Kind: "Namespace", Name: "ns"}, cpp("c", 0, byName("v1", "Namespace", "ns")), PriorityMatchName},
		"deleting policy":         {deployment("ns", "nginx", nil), deleting, PriorityMisMatch},
		"no selector matches":     {deployment("ns", "nginx", nil), pp("ns", "p", 0, sel("v1", "ConfigMap")), PriorityMisMatch},
		"nil policy":              {deployment("ns", "nginx", nil), nil, PriorityMisMatch},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PolicyPriority(tc.template, tc.policy); got != tc.want {
				t.Errorf("PolicyPriority = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	app := map[string]string{"app": "nginx"}
	nginx := deployment("ns", "nginx", app)
	kindPP := pp("ns", "a-kind", 0, sel("apps/v1", "Deployment"))
	labelPP := pp("ns", "b-label", 0, byLabel("apps/v1", "Deployment", app))
	namePP := pp("ns", "c-name", 0, byName("apps/v1", "Deployment", "nginx"))
	highKindPP := pp("ns", "z-high", 5, sel("apps/v1", "Deployment"))
	otherNSPP := pp("other", "a-other", 100, byName("apps/v1", "Deployment", "nginx"))
	nameCPP := cpp("a-cpp", 100, byName("apps/v1", "Deployment", "nginx"))
	kindCPP := cpp("b-cpp", 0, sel("apps/v1", "Deployment"))
	lowCPP := cpp("c-cpp", -1, byName("apps/v1", "Deployment", "nginx"))
	unlabelled := pp("ns", "0-unlabelled", 10, byName("apps/v1", "Deployment", "nginx"))
	unlabelled.PermanentID = ""
	deletingPP := pp("ns", "0-deleting", 10, byName("apps/v1", "Deployment", "nginx"))
	deletingPP.Deleting = true
	negativePP := pp("ns", "0-negative", -5, byName("apps/v1", "Deployment", "nginx"))
	nilPriority := &Policy{Namespace: "ns", Name: "d-nil", PermanentID: "id-nil",
		Spec: &policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{byName("apps/v1", "Deployment", "nginx")}}}
	// A selector changed so that the claiming policy no longer matches.
	changedClaimer := pp("ns", "e-changed", 0, byName("apps/v1", "Deployment", "web"))

	cases := map[string]struct {
		template   Template
		claim      *Claim
		candidates []*Policy
		want       *Policy
		wantKept   bool
	}{
		"no candidates":                    {nginx, nil, nil, nil, false},
		"none matches":                     {nginx, nil, []*Policy{otherNSPP, changedClaimer}, nil, false},
		"single match":                     {nginx, nil, []*Policy{kindPP}, kindPP, false},
		"pp beats higher priority cpp":     {nginx, nil, []*Policy{nameCPP, kindPP}, kindPP, false},
		"pp in other namespace never wins": {nginx, nil, []*Policy{otherNSPP, kindCPP}, kindCPP, false},
		"explicit priority beats implicit": {nginx, nil, []*Policy{namePP, highKindPP}, highKindPP, false},
		"name beats label beats kind":      {nginx, nil, []*Policy{kindPP, labelPP, namePP}, namePP, false},
		"label beats kind":                 {nginx, nil, []*Policy{kindPP, labelPP}, labelPP, false},
		"kind only when nothing better":    {deployment("ns", "web", nil), nil, []*Policy{kindPP, labelPP, namePP}, kindPP, false},
		"name tie-break ascending": {nginx, nil, []*Policy{pp("ns", "b", 0, sel("apps/v1", "Deployment")), pp("ns", "a", 0, sel("apps/v1", "Deployment"))},
			pp("ns", "a", 0, sel("apps/v1", "Deployment")), false},
		"nil priority is zero":               {nginx, nil, []*Policy{negativePP, nilPriority}, nilPriority, false},
		"negative priority loses":            {nginx, nil, []*Policy{kindPP, negativePP}, kindPP, false},
		"cpp priority among cpps":            {nginx, nil, []*Policy{kindCPP, lowCPP, nameCPP}, nameCPP, false},
		"cpp implicit priority among cpps":   {nginx, nil, []*Policy{kindCPP, lowCPP}, kindCPP, false},
		"deleting policy is skipped":         {nginx, nil, []*Policy{deletingPP, kindPP}, kindPP, false},
		"unlabelled best match still chosen": {nginx, nil, []*Policy{unlabelled, kindPP}, unlabelled, false},
		// No preemption: a claimed template stays with its policy.
		"claim kept against better pp":       {nginx, claimFor(kindPP), []*Policy{kindPP, namePP, highKindPP}, kindPP, true},
		"claim kept by cpp against pp":       {nginx, claimFor(kindCPP), []*Policy{kindCPP, namePP}, kindCPP, true},
		"claim by lower cpp kept":            {nginx, claimFor(lowCPP), []*Policy{nameCPP, lowCPP}, lowCPP, true},
		"claimer deleted: best match":        {nginx, claimFor(kindPP), []*Policy{labelPP, namePP}, namePP, false},
		"claimer deleting: best match":       {nginx, claimFor(deletingPP), []*Policy{deletingPP, labelPP}, labelPP, false},
		"claimer no longer matches":          {nginx, claimFor(changedClaimer), []*Policy{changedClaimer, kindCPP}, kindCPP, false},
		"claimer no longer matches and none": {nginx, claimFor(changedClaimer), []*Policy{changedClaimer}, nil, false},
		"claimer recreated with new id": {nginx, &Claim{Namespace: "ns", Name: "a-kind", PermanentID: "old-id"},
			[]*Policy{kindPP, labelPP}, labelPP, false},
		"claim names cpp, pp of same name": {nginx, &Claim{Cluster: true, Name: "a-kind", PermanentID: kindPP.PermanentID},
			[]*Policy{kindPP, labelPP}, labelPP, false},
		"claim without id is no claim": {nginx, &Claim{Namespace: "ns", Name: "a-kind"}, []*Policy{kindPP, labelPP}, labelPP, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Choose(tc.template, tc.claim, tc.candidates)
			if policyName(got.Policy) != policyName(tc.want) || got.Kept != tc.wantKept {
				t.Errorf("Choose = %s (kept %v), want %s (kept %v)", policyName(got.Policy), got.Kept, policyName(tc.want), tc.wantKept)
			}
		})
	}
}

func policyName(p *Policy) string {
	if p == nil {
		return "<none>"
	}
	return policyRef(p)
}
