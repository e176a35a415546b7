package detector

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// createdBindings remembers the bindings this detector created until its
// cache shows them: a template reconciled again in between (its claim
// PATCH's own event) must wait for the cache instead of creating the
// binding a second time and failing with AlreadyExists.
type createdBindings struct {
	mu    sync.Mutex
	items map[types.NamespacedName]time.Time
}

// cacheLag bounds how long a created binding is expected to be missing from
// the cache; after that the cache is believed (the binding may have been
// deleted since).
const cacheLag = 10 * time.Second

func newCreatedBindings() *createdBindings {
	return &createdBindings{items: map[types.NamespacedName]time.Time{}}
}

func (c *createdBindings) add(key types.NamespacedName, now time.Time) {
	c.mu.Lock()
	c.items[key] = now
	c.mu.Unlock()
}

// awaited reports whether key was created less than cacheLag ago and the
// cache has not shown it yet.
func (c *createdBindings) awaited(key types.NamespacedName, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.items[key]
	if ok && now.Sub(at) >= cacheLag {
		delete(c.items, key)
		return false
	}
	return ok
}

// seen forgets key: the cache has it.
func (c *createdBindings) seen(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.items, key)
	c.mu.Unlock()
}
