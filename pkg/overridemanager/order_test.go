package overridemanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func setLabel(v string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": v}}}}
}

func cop(name string, ov policyv1alpha1.Overriders, selectors ...policyv1alpha1.ResourceSelector) policyv1alpha1.ClusterOverridePolicy {
	return policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: selectors, OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: ov}}},
	}
}

var (
	byKind  = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName  = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	byLabel = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}
	other   = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}
)

func TestOrder(t *testing.T) {
	cases := map[string]struct {
		clusterPolicies []policyv1alpha1.ClusterOverridePolicy
		policies        []policyv1alpha1.OverridePolicy
		wantTier        string
		wantApplied     []string
	}{
		"namespaced policy applies after cluster policy and wins": {
			clusterPolicies: []policyv1alpha1.ClusterOverridePolicy{cop("a-cluster", setLabel("cluster"), byName)},
			policies:        []policyv1alpha1.OverridePolicy{op("z-ns", setLabel("ns"), byKind)},
			wantTier:        "ns",
			wantApplied:     []string{"ClusterOverridePolicy a-cluster", "OverridePolicy demo/z-ns"},
		},
		"more specific wins whatever the names": {
			policies: []policyv1alpha1.OverridePolicy{
				op("a-name", setLabel("name"), byName),
				op("b-label", setLabel("label"), byLabel),
				op("c-kind", setLabel("kind"), byKind),
				op("d-all", setLabel("all")),
			},
			wantTier:    "name",
			wantApplied: []string{"OverridePolicy demo/d-all", "OverridePolicy demo/c-kind", "OverridePolicy demo/b-label", "OverridePolicy demo/a-name"},
		},
		"same priority: name ascending, the last name wins": {
			policies:    []policyv1alpha1.OverridePolicy{op("b", setLabel("b"), byKind), op("a", setLabel("a"), byKind)},
			wantTier:    "b",
			wantApplied: []string{"OverridePolicy demo/a", "OverridePolicy demo/b"},
		},
		"non-matching selectors and other namespaces are skipped": {
			policies: func() []policyv1alpha1.OverridePolicy {
				elsewhere := op("elsewhere", setLabel("elsewhere"))
				elsewhere.Namespace = "other"
				return []policyv1alpha1.OverridePolicy{op("miss", setLabel("miss"), other), elsewhere}
			}(),
			wantTier: "",
		},
	}
	cluster := utiltesting.MakeCluster("member1").Obj()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, applied, err := Apply(mustObj(t, deployment), cluster, tc.clusterPolicies, tc.policies)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantTier, out.GetLabels()["tier"]); diff != "" {
				t.Errorf("tier (-want +got):\n%s", diff)
			}
			var got []string
			for _, a := range applied {
				got = append(got, a.String())
			}
			if diff := cmp.Diff(tc.wantApplied, got); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetCluster(t *testing.T) {
	deprecated := op("deprecated", policyv1alpha1.Overriders{})
	deprecated.Spec.OverrideRules = nil
	deprecated.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	deprecated.Spec.Overriders = setLabel("deprecated")
	rules := op("rules", policyv1alpha1.Overriders{})
	rules.Spec.OverrideRules = []policyv1alpha1.RuleWithCluster{
		{TargetCluster: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, Overriders: setLabel("prod")},
		{TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Overriders: policyv1alpha1.Overriders{
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"m1": "yes"}}}}},
	}
	cases := map[string]struct {
		cluster         string
		labels          map[string]string
		wantTier        string
		wantAnnotations map[string]string
		wantApplied     int
	}{
		"member1 with env=prod gets both rules":   {cluster: "member1", labels: map[string]string{"env": "prod"}, wantTier: "prod", wantAnnotations: map[string]string{"m1": "yes"}, wantApplied: 1},
		"member1 without the label gets one rule": {cluster: "member1", wantAnnotations: map[string]string{"m1": "yes"}, wantApplied: 1},
		"member2 gets the deprecated pair":        {cluster: "member2", wantTier: "deprecated", wantApplied: 1},
		"member3 gets nothing":                    {cluster: "member3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := utiltesting.MakeCluster(tc.cluster)
			for k, v := range tc.labels {
				c = c.Label(k, v)
			}
			out, applied, err := Apply(mustObj(t, deployment), c.Obj(), nil, []policyv1alpha1.OverridePolicy{deprecated, rules})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantTier, out.GetLabels()["tier"]); diff != "" {
				t.Errorf("tier (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnnotations, out.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if len(applied) != tc.wantApplied {
				t.Errorf("applied %v, want %d policies", applied, tc.wantApplied)
			}
		})
	}
}

func TestImageParse(t *testing.T) {
	cases := map[string]image{
		"nginx":                         {repository: "nginx"},
		"library/nginx:1.27":            {repository: "library/nginx", tag: "1.27"},
		"registry.k8s.io/pause:3.10":    {registry: "registry.k8s.io", repository: "pause", tag: "3.10"},
		"localhost:5000/a/b@sha256:abc": {registry: "localhost:5000", repository: "a/b", digest: "sha256:abc"},
		"localhost/a":                   {registry: "localhost", repository: "a"},
	}
	for ref, want := range cases {
		t.Run(ref, func(t *testing.T) {
			got, err := parseImage(ref)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(image{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.String() != ref {
				t.Errorf("String() = %q, want %q", got.String(), ref)
			}
		})
	}
}
