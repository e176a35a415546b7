package templatecache

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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
