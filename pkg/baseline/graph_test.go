package baseline

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

// comp is a component with its dependsOn; the tests need nothing else.
func comp(name string, deps ...string) appsv1alpha1.BaselineComponent {
	return appsv1alpha1.BaselineComponent{Name: name, DependsOn: deps}
}

func TestGraph(t *testing.T) {
	cases := map[string]struct {
		components     []appsv1alpha1.BaselineComponent
		wantOrder      []string
		wantDependents map[string][]string
		wantDepth      int
	}{
		"independent components keep spec order": {
			components: []appsv1alpha1.BaselineComponent{comp("c"), comp("a"), comp("b")},
			wantOrder:  []string{"c", "a", "b"},
			wantDepth:  1,
		},
		"prerequisites first, ties in spec order": {
			// operator needs crd; crd is listed after the independent ns.
			components: []appsv1alpha1.BaselineComponent{
				comp("operator", "crd"), comp("ns"), comp("crd"), comp("cr", "operator", "ns"),
			},
			wantOrder:      []string{"ns", "crd", "operator", "cr"},
			wantDependents: map[string][]string{"crd": {"operator"}, "operator": {"cr"}, "ns": {"cr"}},
			wantDepth:      3,
		},
		"chain of 4": {
			components:     []appsv1alpha1.BaselineComponent{comp("d", "c"), comp("c", "b"), comp("b", "a"), comp("a")},
			wantOrder:      []string{"a", "b", "c", "d"},
			wantDependents: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"d"}},
			wantDepth:      4,
		},
		"diamond": {
			components: []appsv1alpha1.BaselineComponent{
				comp("top", "right", "left"), comp("right", "base"), comp("left", "base"), comp("base"),
			},
			wantOrder:      []string{"base", "right", "left", "top"},
			wantDependents: map[string][]string{"base": {"right", "left"}, "right": {"top"}, "left": {"top"}},
			wantDepth:      3,
		},
		"single component": {
			components: []appsv1alpha1.BaselineComponent{comp("a")},
			wantOrder:  []string{"a"},
			wantDepth:  1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := NewGraph(tc.components)
			if err != nil {
				t.Fatalf("NewGraph: %v", err)
			}
			if diff := cmp.Diff(tc.wantOrder, g.Order()); diff != "" {
				t.Errorf("Order (-want +got):\n%s", diff)
			}
			wantReverse := make([]string, len(tc.wantOrder))
			for i, n := range tc.wantOrder {
				wantReverse[len(wantReverse)-1-i] = n
			}
			if diff := cmp.Diff(wantReverse, g.Reverse()); diff != "" {
				t.Errorf("Reverse (-want +got):\n%s", diff)
			}
			for _, c := range tc.components {
				if diff := cmp.Diff(tc.wantDependents[c.Name], g.Dependents(c.Name)); diff != "" {
					t.Errorf("Dependents(%s) (-want +got):\n%s", c.Name, diff)
				}
				if diff := cmp.Diff(c.DependsOn, g.Deps(c.Name), cmpEmptyNil); diff != "" {
					t.Errorf("Deps(%s) (-want +got):\n%s", c.Name, diff)
				}
				if !g.Has(c.Name) || g.Component(c.Name) == nil || g.Component(c.Name).Name != c.Name {
					t.Errorf("Has/Component(%s) do not find it", c.Name)
				}
			}
			if got := g.Depth(); got != tc.wantDepth {
				t.Errorf("Depth = %d, want %d", got, tc.wantDepth)
			}
			if g.Has("missing") || g.Component("missing") != nil {
				t.Error("Has/Component(missing) find it")
			}
		})
	}
}

// cmpEmptyNil treats nil and empty slices alike.
var cmpEmptyNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestNewGraphRefusesInvalid(t *testing.T) {
	cases := map[string]struct {
		components []appsv1alpha1.BaselineComponent
		wantErr    string
	}{
		"cycle": {
			components: []appsv1alpha1.BaselineComponent{comp("a", "b"), comp("b", "a")},
			wantErr:    "spec.components: Invalid value: dependency cycle: a → b → a",
		},
		"unknown": {
			components: []appsv1alpha1.BaselineComponent{comp("a", "x")},
			wantErr:    `spec.components[0].dependsOn[0]: Not found: "x": component "a" depends on unknown component "x"`,
		},
		"duplicate": {
			components: []appsv1alpha1.BaselineComponent{comp("a"), comp("a")},
			wantErr:    `spec.components[1].name: Duplicate value: "a"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := NewGraph(tc.components)
			if err == nil {
				t.Fatalf("NewGraph = %v, want error", g.Order())
			}
			if got := err.Error(); got != tc.wantErr {
				t.Errorf("error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestGraphFromDeps(t *testing.T) {
	// b was removed with c; a depends on b, which is gone, and on c.
	g, err := GraphFromDeps([]string{"a", "c"}, map[string][]string{"a": {"b", "c", "c"}})
	if err != nil {
		t.Fatalf("GraphFromDeps: %v", err)
	}
	if diff := cmp.Diff([]string{"c", "a"}, g.Order()); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, g.Deps("a")); diff != "" {
		t.Errorf("Deps(a) (-want +got):\n%s", diff)
	}
	if g.Component("a") != nil {
		t.Error("Component(a) is not nil")
	}
	if _, err := GraphFromDeps([]string{"a", "c"}, map[string][]string{"a": {"c"}, "c": {"a"}}); err == nil {
		t.Error("GraphFromDeps accepted a cycle")
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		spec     appsv1alpha1.ClusterBaselineSpec
		wantErrs []string
	}{
		"valid": {
			spec: appsv1alpha1.ClusterBaselineSpec{
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				Components: []appsv1alpha1.BaselineComponent{
					comp("crd"),
					{
						Name: "operator", DependsOn: []string{"crd"},
						ReadinessExpression: "self.status.phase == 'Running'",
						Timeout:             &metav1.Duration{Duration: time.Minute},
						GatesScheduling:     ptr.To(false),
					},
				},
			},
		},
		"2-cycle": {
			spec:     specOf(comp("a", "b"), comp("b", "a")),
			wantErrs: []string{"spec.components: Invalid value: dependency cycle: a → b → a"},
		},
		"3-cycle reached from outside, reported once from its first member": {
			// x reaches the cycle but is not on it; c comes first in spec order.
			spec:     specOf(comp("x", "a"), comp("c", "a"), comp("a", "b"), comp("b", "c")),
			wantErrs: []string{"spec.components: Invalid value: dependency cycle: c → a → b → c"},
		},
		"self-dependency": {
			spec:     specOf(comp("a", "a")),
			wantErrs: []string{"spec.components: Invalid value: dependency cycle: a → a"},
		},
		"two disjoint cycles": {
			spec: specOf(comp("a", "b"), comp("c", "d"), comp("b", "a"), comp("d", "c")),
			wantErrs: []string{
				"spec.components: Invalid value: dependency cycle: a → b → a",
				"spec.components: Invalid value: dependency cycle: c → d → c",
			},
		},
		"two cycles through one component are one error": {
			// Fixing a → b → a leaves a → c → a, reported then.
			spec:     specOf(comp("a", "b", "c"), comp("b", "a"), comp("c", "a")),
			wantErrs: []string{"spec.components: Invalid value: dependency cycle: a → b → a"},
		},
		"dangling dependsOn, ignored for cycles": {
			spec: specOf(comp("a", "x"), comp("b", "a", "y")),
			wantErrs: []string{
				`spec.components[0].dependsOn[0]: Not found: "x": component "a" depends on unknown component "x"`,
				`spec.components[1].dependsOn[1]: Not found: "y": component "b" depends on unknown component "y"`,
			},
		},
		"duplicate names and dependsOn": {
			spec: specOf(comp("a"), comp("b", "a", "a"), comp("a")),
			wantErrs: []string{
				`spec.components[1].dependsOn[1]: Duplicate value: "a"`,
				`spec.components[2].name: Duplicate value: "a"`,
			},
		},
		"bad readinessExpression": {
			spec: specOf(
				appsv1alpha1.BaselineComponent{Name: "a", ReadinessExpression: "selff.ready"},
				appsv1alpha1.BaselineComponent{Name: "b", ReadinessExpression: "1 + 1"},
			),
			wantErrs: []string{
				`spec.components[0].readinessExpression: Invalid value: "selff.ready": does not compile: ERROR: <input>:1:1: undeclared reference to 'selff' (in container '')`,
				`spec.components[1].readinessExpression: Invalid value: "1 + 1": does not compile: must return bool, not int`,
			},
		},
		"non-positive timeout": {
			spec: specOf(
				appsv1alpha1.BaselineComponent{Name: "a", Timeout: &metav1.Duration{}},
				appsv1alpha1.BaselineComponent{Name: "b", Timeout: &metav1.Duration{Duration: -time.Second}},
			),
			wantErrs: []string{
				`spec.components[0].timeout: Invalid value: "0s": must be positive`,
				`spec.components[1].timeout: Invalid value: "-1s": must be positive`,
			},
		},
		"bad selector": {
			spec: appsv1alpha1.ClusterBaselineSpec{
				ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}},
				Components:      []appsv1alpha1.BaselineComponent{comp("a")},
			},
			wantErrs: []string{
				`spec.clusterSelector: Invalid value: {"matchExpressions":[{"key":"env","operator":"Near"}]}: "Near" is not a valid label selector operator`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, err := range Validate(&tc.spec) {
				// CEL errors go on with a source excerpt on further lines.
				line, _, _ := strings.Cut(err.Error(), "\n")
				got = append(got, line)
			}
			if diff := cmp.Diff(tc.wantErrs, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func specOf(components ...appsv1alpha1.BaselineComponent) appsv1alpha1.ClusterBaselineSpec {
	return appsv1alpha1.ClusterBaselineSpec{Components: components}
}
