package detector

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
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

// The cache showing a created binding ends the wait for it, even when its
// template is not reconciled again: nothing is kept per binding for good.
func TestBindingAddedToTheCacheIsNoLongerAwaited(t *testing.T) {
	d := &Detector{created: newCreatedBindings()}
	key := types.NamespacedName{Namespace: "demo", Name: "web-deployment"}
	d.created.add(key, time.Now())
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	d.bindingHandler().OnAdd(b, false)
	if n := len(d.created.items); n != 0 {
		t.Errorf("%d created bindings still awaited after the cache showed them", n)
	}
}
