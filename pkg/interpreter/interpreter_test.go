package interpreter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// nativeRender renders with the native interpreter, failing the test on an
// error.
func nativeRender(t *testing.T, template *unstructured.Unstructured, share *int64) *unstructured.Unstructured {
	t.Helper()
	out, err := Native.Render(context.Background(), template, share)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return out
}

// items wraps reflected statuses as a binding's aggregated status items.
func items(t *testing.T, statuses ...map[string]any) []workv1alpha2.AggregatedStatusItem {
	t.Helper()
	out := make([]workv1alpha2.AggregatedStatusItem, len(statuses))
	for i, s := range statuses {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = workv1alpha2.AggregatedStatusItem{ClusterName: fmt.Sprint("m", i), Status: &runtime.RawExtension{Raw: raw}}
	}
	return out
}

func deploymentTemplate() *unstructured.Unstructured {
	return obj(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "nginx", "namespace": "demo", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
			"labels":        map[string]any{"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "p1"},
			"annotations":   map[string]any{"propagationpolicy.karmada.io/name": "pp", "note": "keep"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
		"spec": map[string]any{
			"replicas": int64(6),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "nginx", "image": "nginx:1", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
			}}}},
		},
		"status": map[string]any{"replicas": int64(6)},
	})
}

func TestRender(t *testing.T) {
	cases := map[string]struct {
		template *unstructured.Unstructured
		replicas *int64
		want     map[string]any
	}{
		"deployment share replaces replicas, bookkeeping dropped, claim kept as in Karmada": {
			template: deploymentTemplate(),
			replicas: ptr.To[int64](2),
			want: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{
					"name": "nginx", "namespace": "demo",
					"labels":      map[string]any{"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "p1"},
					"annotations": map[string]any{"note": "keep", "propagationpolicy.karmada.io/name": "pp"},
				},
				"spec": map[string]any{
					"replicas": int64(2),
					"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
						"name": "nginx", "image": "nginx:1", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
					}}}},
				},
			},
		},
		"service keeps the member's cluster IP and node ports": {
			template: obj(map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": "web", "namespace": "demo"},
				"spec": map[string]any{
					"clusterIP": "10.96.0.10", "clusterIPs": []any{"10.96.0.10"}, "ipFamilies": []any{"IPv4"},
					"type":  "NodePort",
					"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}},
				},
			}),
			want: map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": "web", "namespace": "demo"},
				"spec":     map[string]any{"type": "NodePort", "ports": []any{map[string]any{"port": int64(80)}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := nativeRender(t, tc.template, tc.replicas)
			if diff := cmp.Diff(tc.want, got.Object); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderRetainReplicas(t *testing.T) {
	tpl := deploymentTemplate()
	labels := tpl.GetLabels()
	labels[RetainReplicasLabel] = "true"
	tpl.SetLabels(labels)
	got := nativeRender(t, tpl, ptr.To[int64](2))
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas"); found {
		t.Error("spec.replicas rendered for a template whose members own replicas")
	}
}

func TestDrifted(t *testing.T) {
	desired := nativeRender(t, deploymentTemplate(), ptr.To[int64](2))
	live := func(edit func(m map[string]any)) *unstructured.Unstructured {
		l := desired.DeepCopy()
		// What the member adds: defaults, status, server metadata.
		_ = unstructured.SetNestedField(l.Object, "RollingUpdate", "spec", "strategy", "type")
		_ = unstructured.SetNestedField(l.Object, int64(2), "status", "replicas")
		l.SetResourceVersion("99")
		if edit != nil {
			edit(l.Object)
		}
		return l
	}
	cases := map[string]struct {
		live      *unstructured.Unstructured
		wantDrift bool
		wantPath  string
	}{
		"member defaults and status are not drift": {live: live(nil)},
		"normalised quantity is not drift": {live: live(func(m map[string]any) {
			c := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "1000m"
		})},
		"edited image is drift": {live: live(func(m map[string]any) {
			c := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["image"] = "nginx:evil"
		}), wantDrift: true, wantPath: "spec.template.spec.containers[0].image"},
		"scaled by hand is drift": {live: live(func(m map[string]any) {
			m["spec"].(map[string]any)["replicas"] = int64(5)
		}), wantDrift: true, wantPath: "spec.replicas"},
		"removed container is drift": {live: live(func(m map[string]any) {
			m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{}
		}), wantDrift: true, wantPath: "spec.template.spec.containers"},
		"removed label is drift": {live: live(func(m map[string]any) {
			delete(m["metadata"].(map[string]any)["labels"].(map[string]any), "app")
		}), wantDrift: true, wantPath: "metadata.labels.app"},
		"labels that are not strings are not labels": {live: live(func(m map[string]any) {
			m["metadata"].(map[string]any)["labels"].(map[string]any)["other"] = int64(1)
		}), wantDrift: true, wantPath: "metadata.labels."}, // either label
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got, path := Drifted(desired, tc.live); got != tc.wantDrift || !strings.HasPrefix(path, tc.wantPath) {
				t.Errorf("Drifted = %v at %q, want %v at %q", got, path, tc.wantDrift, tc.wantPath)
			}
		})
	}
}

func TestHashIsStable(t *testing.T) {
	a, _ := Hash(nativeRender(t, deploymentTemplate(), ptr.To[int64](2)))
	b, _ := Hash(nativeRender(t, deploymentTemplate(), ptr.To[int64](2)))
	c, _ := Hash(nativeRender(t, deploymentTemplate(), ptr.To[int64](3)))
	if a != b || a == c {
		t.Errorf("hash not stable or not sensitive: %s %s %s", a, b, c)
	}
	// Member copies carry the hash of encoding/json's encoding of their
	// manifest; a hash computed any other way would rewrite every one of
	// them after an upgrade.
	for _, replicas := range []int64{2, 3} {
		m := nativeRender(t, deploymentTemplate(), ptr.To(replicas))
		m.SetAnnotations(map[string]string{"a": "<b> & \"c\"", "ü": "\u2028"})
		data, err := json.Marshal(m.Object)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Hash(m)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if want := hex.EncodeToString(sum[:12]); got != want {
			t.Errorf("Hash = %s, want %s (encoding/json's)", got, want)
		}
	}
}

func TestHealthAndAggregate(t *testing.T) {
	member := func(replicas, available, updated, observed, generation int64) *unstructured.Unstructured {
		return obj(map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "nginx", "generation": generation},
			"spec":     map[string]any{"replicas": replicas},
			"status": map[string]any{"replicas": replicas, "readyReplicas": available, "availableReplicas": available,
				"updatedReplicas": updated, "observedGeneration": observed},
		})
	}
	healthy, rolling := member(2, 2, 2, 4, 4), member(4, 3, 4, 4, 4)
	if got := nativeHealth(healthy); got != workv1alpha2.ResourceHealthy {
		t.Errorf("healthy member: %s", got)
	}
	if got := nativeHealth(rolling); got != workv1alpha2.ResourceUnhealthy {
		t.Errorf("member with 3/4 available: %s", got)
	}
	if got := nativeHealth(member(2, 2, 2, 3, 4)); got != workv1alpha2.ResourceUnhealthy {
		t.Errorf("member that has not observed its spec: %s", got)
	}
	template := obj(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx", "generation": int64(9)}})
	got := nativeAggregateStatus(template, items(t, nativeReflectStatus(healthy), nativeReflectStatus(rolling)), true)
	want := map[string]any{"replicas": int64(6), "readyReplicas": int64(5), "availableReplicas": int64(5),
		"updatedReplicas": int64(6), "unavailableReplicas": int64(0), "observedGeneration": int64(9)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AggregateStatus (-want +got):\n%s", diff)
	}
	behind := items(t, nativeReflectStatus(member(2, 2, 2, 3, 4)))
	if got := nativeAggregateStatus(template, behind, true)["observedGeneration"]; got != int64(0) {
		t.Errorf("observedGeneration with a member behind, template never observed: %v, want 0", got)
	}
	_ = unstructured.SetNestedField(template.Object, int64(7), "status", "observedGeneration")
	if got := nativeAggregateStatus(template, behind, true)["observedGeneration"]; got != int64(7) {
		t.Errorf("observedGeneration with a member behind: %v, want the template's own 7", got)
	}
}

func TestAutoscalerReflectsReplicaCountsOnly(t *testing.T) {
	hpa := obj(map[string]any{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "web", "generation": int64(2)},
		"status": map[string]any{"currentReplicas": int64(3), "desiredReplicas": int64(4), "observedGeneration": int64(2),
			"lastScaleTime": "2026-12-02T00:00:00Z",
			"currentMetrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
				"current": map[string]any{"averageUtilization": int64(61)}}}}},
	})
	got := nativeReflectStatus(hpa)
	want := map[string]any{"currentReplicas": int64(3), "desiredReplicas": int64(4), "observedGeneration": int64(2), "generation": int64(2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reflected HPA status (-want +got):\n%s", diff)
	}
}
