package templatecache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
)

func TestTemplateCacheIsKeyedByRecordedVersion(t *testing.T) {
	c := New()
	key := types.NamespacedName{Namespace: "demo", Name: "nginx-deployment"}
	tpl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "resourceVersion": "12"}}}
	c.Put(key, "10", tpl)
	if _, ok := c.Get(key, "10"); !ok {
		t.Error("miss for the recorded version")
	}
	if _, ok := c.Get(key, "11"); ok {
		t.Error("hit for another recorded version")
	}
	got, _ := c.Get(key, "10")
	got.SetName("changed")
	again, _ := c.Get(key, "10")
	if again.GetName() != "x" {
		t.Error("cached template shared with a caller that modified it")
	}
	c.Forget(key)
	if _, ok := c.Get(key, "10"); ok {
		t.Error("hit after forget")
	}
}

func TestTemplateCacheDropsManagedFields(t *testing.T) {
	c := New()
	key := types.NamespacedName{Namespace: "demo", Name: "settings-configmap"}
	managed := []any{map[string]any{"manager": "kubectl", "operation": "Apply"}}
	tpl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "labels": map[string]any{"app": "web"}, "managedFields": managed},
		"data":     map[string]any{"k": "v"}}}
	c.Put(key, "3", tpl)
	got, ok := c.Get(key, "3")
	if !ok {
		t.Fatal("miss")
	}
	want := tpl.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("cached template (-want +got):\n%s", diff)
	}
	// The caller's object keeps its managedFields.
	if _, ok := tpl.Object["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Error("Put changed the template it was given")
	}
}

// A template listed as packed JSON (clustercache.ListObjects) reads back as
// one Put from its decoded form.
func TestTemplateCachePutPacked(t *testing.T) {
	c := New()
	key := types.NamespacedName{Namespace: "demo", Name: "settings-configmap"}
	c.PutPacked(key, "4", jsonpack.Pack("ConfigMap", jsonpack.Server, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","resourceVersion":"4"},"data":{"k":"v"}}`)))
	got, ok := c.Get(key, "4")
	if !ok {
		t.Fatal("miss")
	}
	want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "resourceVersion": "4"}, "data": map[string]any{"k": "v"}}
	if diff := cmp.Diff(want, got.Object); diff != "" {
		t.Errorf("cached template (-want +got):\n%s", diff)
	}
}
