package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// listingCache is a member cache whose first list the test ends; it counts
// how often it was asked.
type listingCache struct {
	done  atomic.Bool
	asked atomic.Int32
}

func (c *listingCache) listing() bool {
	c.asked.Add(1)
	return !c.done.Load()
}

// waitAsked returns once the cache was asked n more times than when
// called: the parked bindings' goroutine has looked and found it listing.
func (c *listingCache) waitAsked(t *testing.T, n int32) {
	t.Helper()
	target := c.asked.Load() + n
	for deadline := time.Now().Add(30 * time.Second); c.asked.Load() < target; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the parked bindings' goroutine stopped looking at the cache")
		}
	}
}

func TestParkedUntilTheListIsIn(t *testing.T) {
	var mu sync.Mutex
	var enqueued []reconcile.Request
	got := func() []reconcile.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]reconcile.Request(nil), enqueued...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	count := prometheus.NewGauge(prometheus.GaugeOpts{Name: "parked"})
	p := newParked(ctx, time.Millisecond, func(req reconcile.Request) {
		mu.Lock()
		enqueued = append(enqueued, req)
		mu.Unlock()
	}, count)
	// The exported count follows what is parked.
	counted := func(t *testing.T) {
		t.Helper()
		if got, want := testutil.ToFloat64(count), float64(p.len()); got != want {
			t.Fatalf("parked count %v, want %v", got, want)
		}
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: name}}
	}

	a, b := &listingCache{}, &listingCache{}
	p.park("m1/configmaps", req("a1"), a.listing)
	p.park("m1/configmaps", req("a2"), a.listing)
	p.park("m1/configmaps", req("a1"), a.listing) // again: still one entry
	p.park("m2/configmaps", req("b1"), b.listing)
	a.waitAsked(t, 3)
	if e := got(); len(e) != 0 || p.len() != 3 {
		t.Fatalf("while both caches list: enqueued %v, %d parked; want none enqueued, 3 parked", e, p.len())
	}
	counted(t)

	a.done.Store(true)
	for deadline := time.Now().Add(30 * time.Second); len(got()) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the list is in, enqueued only %v", got())
		}
	}
	b.waitAsked(t, 3)
	want := []reconcile.Request{req("a1"), req("a2")}
	sortReqs := cmpopts.SortSlices(func(x, y reconcile.Request) bool { return x.Name < y.Name })
	if diff := cmp.Diff(want, got(), sortReqs); diff != "" {
		t.Fatalf("enqueued once the first cache listed (-want +got):\n%s", diff)
	}
	if p.len() != 1 {
		t.Fatalf("%d parked, want b1 alone", p.len())
	}
	counted(t)

	// A binding parked on a cache that is no longer listing goes at once.
	p.park("m1/configmaps", req("a3"), a.listing)
	for deadline := time.Now().Add(30 * time.Second); len(got()) < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("parked on a listed cache, not enqueued: %v", got())
		}
	}

	// Shutting down drops what waits; nothing is enqueued into a stopped
	// controller.
	cancel()
	for deadline := time.Now().Add(30 * time.Second); p.len() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d still parked after shutdown", p.len())
		}
	}
	if diff := cmp.Diff(append(want, req("a3")), got(), sortReqs); diff != "" {
		t.Fatalf("enqueued (-want +got):\n%s", diff)
	}
	counted(t)
}
