// Package templatecache keeps resource templates as JSON bytes, keyed by
// their binding and the template resourceVersion the binding records. The
// detector fills it when it reads a template to write its binding, and the
// executor reads it to render the member objects, so a template version is
// read from the control plane once, not once per controller; member status
// churn never turns into control-plane reads either. Bytes rather than
// decoded objects: a decoded unstructured object costs several times its
// JSON in memory, and most entries are read rarely; the bytes are packed
// (jsonpack), a sixth to a third of the JSON.
package templatecache

import (
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
	"github.com/atoll-dev/atoll/pkg/util/jsonvalue"
)

// Cache is safe for concurrent use; the zero value is not (use New).
type Cache struct {
	mu    sync.Mutex
	items map[types.NamespacedName]entry
}

type entry struct {
	resourceVersion string
	packed          []byte
}

// New returns an empty cache.
func New() *Cache { return &Cache{items: map[types.NamespacedName]entry{}} }

// Get returns a fresh copy of the template stored for binding under the
// recorded resourceVersion rv; a different or empty rv is a miss.
func (c *Cache) Get(binding types.NamespacedName, rv string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	item, ok := c.items[binding]
	c.mu.Unlock()
	if !ok || rv == "" || item.resourceVersion != rv {
		return nil, false
	}
	data, err := jsonpack.Unpack(item.packed)
	if err != nil {
		return nil, false
	}
	u := &unstructured.Unstructured{}
	if err := jsonvalue.Unstructured(data, u); err != nil {
		return nil, false
	}
	return u, true
}

// Put stores u for binding under the template resourceVersion the binding
// records (which may be older than u's own after a status write). u's
// managedFields are not kept: nothing renders them, and they are often
// the larger part of a template. u itself is not changed.
func (c *Cache) Put(binding types.NamespacedName, rv string, u *unstructured.Unstructured) {
	data, err := json.Marshal(withoutManagedFields(u.Object))
	if err != nil {
		return
	}
	c.PutPacked(binding, rv, jsonpack.Pack(u.GetKind(), jsonpack.Sorted, data))
}

// PutPacked stores a template already packed by jsonpack, without
// managedFields (as clustercache lists objects), for binding under the
// template resourceVersion rv. packed is kept, not copied: the caller must
// not change it.
func (c *Cache) PutPacked(binding types.NamespacedName, rv string, packed []byte) {
	c.mu.Lock()
	c.items[binding] = entry{resourceVersion: rv, packed: packed}
	c.mu.Unlock()
}

// withoutManagedFields returns obj, or a shallow copy of it without
// metadata.managedFields when it has them.
func withoutManagedFields(obj map[string]any) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	if _, ok := meta["managedFields"]; !ok {
		return obj
	}
	trimmed := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			trimmed[k] = v
		}
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	out["metadata"] = trimmed
	return out
}

// Forget drops the entry of a binding that is gone.
func (c *Cache) Forget(binding types.NamespacedName) {
	c.mu.Lock()
	delete(c.items, binding)
	c.mu.Unlock()
}

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
