package interpreter

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter/script"
)

// staticSource serves a fixed list of customizations.
type staticSource []configv1alpha1.ResourceInterpreterCustomization

func (s staticSource) ForKind(_ context.Context, gvk schema.GroupVersionKind) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	var out []*configv1alpha1.ResourceInterpreterCustomization
	for i := range s {
		if c := &s[i]; c.Spec.Target.APIVersion == gvk.GroupVersion().String() && c.Spec.Target.Kind == gvk.Kind {
			out = append(out, c)
		}
	}
	return out, nil
}

func loadCustomization(t testing.TB, file string) configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	data, err := os.ReadFile("../../test/testdata/interpreter/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var ric configv1alpha1.ResourceInterpreterCustomization
	if err := yaml.UnmarshalStrict(data, &ric); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ric.ResourceVersion = "1"
	return ric
}

func rollout(replicas int64) *unstructured.Unstructured {
	return obj(map[string]any{
		"apiVersion": "apps.example.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(2)},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{
				"serviceAccountName": "robot",
				"containers": []any{map[string]any{"name": "web", "image": "nginx",
					"envFrom":   []any{map[string]any{"configMapRef": map[string]any{"name": "web-config"}}},
					"resources": map[string]any{"requests": map[string]any{"cpu": "250m"}}}},
			}},
		},
	})
}

func TestRolloutCustomization(t *testing.T) {
	ctx := context.Background()
	i := New(NewCustomizations(staticSource{loadCustomization(t, "rollout-customization.yaml")}, script.DefaultLimits))
	gvk := rollout(1).GroupVersionKind()

	if !i.HasReplicas(ctx, gvk) {
		t.Fatal("HasReplicas = false for a kind whose customization reads replicas")
	}
	n, req, err := i.Replicas(ctx, rollout(5))
	if err != nil {
		t.Fatal(err)
	}
	wantReq := &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
	if n != 5 || !cmp.Equal(wantReq, req, quantityCmp) {
		t.Errorf("Replicas = %d, %+v; want 5, %+v", n, req, wantReq)
	}

	desired, err := i.Render(ctx, rollout(5), ptr.To[int64](2))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(desired.Object, "spec", "replicas"); got != 2 {
		t.Errorf("rendered replicas = %d, want the share 2", got)
	}

	observed := desired.DeepCopy()
	_ = unstructured.SetNestedField(observed.Object, true, "spec", "paused")
	_ = unstructured.SetNestedMap(observed.Object, map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "observedGeneration": int64(2)}, "status")
	retained, err := i.Retain(ctx, rollout(5), desired.DeepCopy(), observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if paused, _, _ := unstructured.NestedBool(retained.Object, "spec", "paused"); !paused {
		t.Error("Retain did not keep the member's spec.paused")
	}

	reflected, err := i.ReflectStatus(ctx, observed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "observedGeneration": int64(2)}, reflected); diff != "" {
		t.Errorf("ReflectStatus (-want +got):\n%s", diff)
	}
	if h, err := i.Health(ctx, observed); err != nil || h != workv1alpha2.ResourceUnhealthy {
		t.Errorf("Health = %s, %v; want Unhealthy (1 of 2 ready)", h, err)
	}

	status, err := i.AggregateStatus(ctx, rollout(5), items(t, reflected, map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}), true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"replicas": int64(5), "readyReplicas": int64(4)}, status); diff != "" {
		t.Errorf("AggregateStatus (-want +got):\n%s", diff)
	}

	deps, err := i.Dependencies(ctx, rollout(5))
	if err != nil {
		t.Fatal(err)
	}
	wantDeps := []Dependency{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "shop", Name: "robot"},
	}
	if diff := cmp.Diff(wantDeps, deps); diff != "" {
		t.Errorf("Dependencies (-want +got):\n%s", diff)
	}
}

func TestFailingCustomizations(t *testing.T) {
	ctx := context.Background()
	canary := obj(map[string]any{"apiVersion": "apps.example.io/v1alpha1", "kind": "Canary",
		"metadata": map[string]any{"name": "c", "namespace": "shop"}, "status": map[string]any{"readyReplicas": int64(1)}})
	limits := script.DefaultLimits
	limits.Timeout = 100 * time.Millisecond
	cases := map[string]struct {
		file    string
		wantErr string
		wantIs  error
	}{
		"does not compile": {file: "canary-broken-customization.yaml", wantErr: "ResourceInterpreterCustomization example-canary: statusReflection: parsing"},
		"never returns":    {file: "canary-endless-customization.yaml", wantIs: script.ErrTimeout},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i := New(NewCustomizations(staticSource{loadCustomization(t, tc.file)}, limits))
			_, err := i.ReflectStatus(ctx, canary)
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("error %v is not a customization error", err)
			}
			if e.Customization != "example-canary" || e.Operation != StatusReflection {
				t.Errorf("error names %s/%s", e.Customization, e.Operation)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %q is not %v", err, tc.wantIs)
			}
			var conds []metav1.Condition
			if !RecordFailure(&conds, 1, err, StatusReflection) || conds[0].Reason != "StatusReflectionFailed" {
				t.Errorf("condition = %+v", conds)
			}
			if !RecordFailure(&conds, 1, nil, StatusReflection) || len(conds) != 0 {
				t.Errorf("success did not clear the condition: %+v", conds)
			}
			// The native interpreter still answers for kinds without a script.
			if h, err := i.Health(ctx, canary); err != nil || h != workv1alpha2.ResourceHealthy {
				t.Errorf("Health fallback = %s, %v", h, err)
			}
		})
	}
}

func TestScriptMayNotChangeIdentity(t *testing.T) {
	ric := loadCustomization(t, "rollout-customization.yaml")
	ric.Spec.Customizations.ReplicaRevision.LuaScript = `function ReviseReplica(obj, n) obj.metadata.namespace = "kube-system" return obj end`
	i := New(NewCustomizations(staticSource{ric}, script.DefaultLimits))
	_, err := i.Render(context.Background(), rollout(3), ptr.To[int64](1))
	if err == nil || !strings.Contains(err.Error(), "changed the object's apiVersion, kind, name or namespace") {
		t.Errorf("err = %v", err)
	}
}

// TestDependenciesOfSeveralCustomizations: every customization's
// dependencyInterpretation runs and the results are united, as Karmada does
// (its e2e applies one for ServiceAccounts and one for ConfigMaps).
func TestDependenciesOfSeveralCustomizations(t *testing.T) {
	ctx := context.Background()
	ric := func(name, lua string) configv1alpha1.ResourceInterpreterCustomization {
		return configv1alpha1.ResourceInterpreterCustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
			Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
				Target:         configv1alpha1.CustomizationTarget{APIVersion: "apps.example.io/v1alpha1", Kind: "Rollout"},
				Customizations: configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.LuaScript{LuaScript: lua}},
			},
		}
	}
	sa := ric("b-sa", `function GetDependencies(o)
  return {{apiVersion = 'v1', kind = 'ServiceAccount', namespace = o.metadata.namespace, name = o.spec.template.spec.serviceAccountName}}
end`)
	cm := ric("a-cm", `function GetDependencies(o)
  return {{apiVersion = 'v1', kind = 'ConfigMap', namespace = o.metadata.namespace, name = 'web-config'},
          {apiVersion = 'v1', kind = 'ServiceAccount', namespace = o.metadata.namespace, name = 'robot'}}
end`)
	i := New(NewCustomizations(staticSource{sa, cm}, script.DefaultLimits))
	deps, err := i.Dependencies(ctx, rollout(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []Dependency{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "shop", Name: "robot"},
	}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if v := i.Version(ctx, rollout(1).GroupVersionKind(), DependencyInterpretation); v != "a-cm@1,b-sa@1" {
		t.Errorf("Version = %q, want both customizations", v)
	}
}
