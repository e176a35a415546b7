package detector

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestCreatedBindingsAwaitTheCache(t *testing.T) {
	c := newCreatedBindings()
	key := types.NamespacedName{Namespace: "demo", Name: "web-deployment"}
	now := time.Unix(1000, 0)
	if c.awaited(key, now) {
		t.Fatal("awaited before any create")
	}
	c.add(key, now)
	if !c.awaited(key, now.Add(time.Second)) {
		t.Error("a binding created a second ago is not awaited")
	}
	if c.awaited(key, now.Add(cacheLag)) {
		t.Error("still awaited after cacheLag: the cache must be believed")
	}
	c.add(key, now)
	c.seen(key)
	if c.awaited(key, now) {
		t.Error("awaited after the cache showed it")
	}
}
