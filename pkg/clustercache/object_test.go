package clustercache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCompactKeepsWhatReadersNeed(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42", "generation": int64(3),
			"labels":        map[string]any{"karmada.io/managed": "true"},
			"annotations":   map[string]any{"atoll.dev/owner": "rb-1"},
			"managedFields": []any{map[string]any{"manager": "atoll", "operation": "Apply"}},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
	got, err := compact(u.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	o, ok := got.(*Object)
	if !ok {
		t.Fatalf("compact returned %T, want *Object", got)
	}
	wantMeta := metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1", ResourceVersion: "42", Generation: 3,
		Labels: map[string]string{"karmada.io/managed": "true"}, Annotations: map[string]string{"atoll.dev/owner": "rb-1"}}
	if diff := cmp.Diff(wantMeta, o.ObjectMeta); diff != "" {
		t.Errorf("metadata kept (-want +got):\n%s", diff)
	}
	live := Live(o)
	want := u.DeepCopy()
	want.SetManagedFields(nil)
	if diff := cmp.Diff(want.Object, live.Object); diff != "" {
		t.Errorf("decoded object (-want +got):\n%s", diff)
	}
	// What a reconcile does to its decoded copy does not reach the cache.
	live.SetLabels(nil)
	if again := Live(o.DeepCopyObject()); again.GetLabels()["karmada.io/managed"] != "true" {
		t.Error("a change to a decoded copy reached the cached object")
	}
}
