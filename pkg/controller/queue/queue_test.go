package queue

import (
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

func newTestQueue(threshold int) *Recycling[string] {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	return NewRecycling(fmt.Sprintf("test-%d", rand.Int()), threshold, func() priorityqueue.PriorityQueue[string] {
		return priorityqueue.New("test", func(o *priorityqueue.Opts[string]) { o.RateLimiter = limiter })
	})
}

// work hands out n items and marks each done.
func work(t *testing.T, q *Recycling[string], n int) []string {
	t.Helper()
	var got []string
	for range n {
		item, shutdown := q.Get()
		if shutdown {
			t.Fatal("queue shut down")
		}
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func TestRecycling(t *testing.T) {
	cases := map[string]struct {
		// left is what remains when the backlog's last item is done.
		left         func(t *testing.T, q *Recycling[string])
		wantRecycled bool
	}{
		"nothing left": {wantRecycled: true},
		"an item ready": {
			left: func(_ *testing.T, q *Recycling[string]) { q.Add("late") },
		},
		"an item waiting for its delay": {
			left: func(_ *testing.T, q *Recycling[string]) { q.AddAfter("later", time.Hour) },
		},
		"an item waiting for its backoff": {
			left: func(_ *testing.T, q *Recycling[string]) {
				for range 20 {
					q.AddRateLimited("failing") // about a second's backoff by the 11th
				}
			},
		},
		"another item handed out and not done": {
			left: func(t *testing.T, q *Recycling[string]) {
				q.Add("busy")
				if item, _ := q.Get(); item != "busy" {
					t.Fatalf("got %q, want busy", item)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := newTestQueue(10)
			defer q.ShutDown()
			for i := range 20 {
				q.Add(fmt.Sprint(i))
			}
			work(t, q, 19)
			last, _ := q.Get()
			if tc.left != nil {
				tc.left(t, q)
			}
			before := q.current()
			q.Done(last)
			if recycled := q.current() != before; recycled != tc.wantRecycled {
				t.Errorf("recycled: %v, want %v", recycled, tc.wantRecycled)
			}
			// The queue goes on either way.
			q.Add("after")
			if got := work(t, q, 1); got[0] == "" {
				t.Errorf("nothing handed out after: %v", got)
			}
		})
	}
}

func TestNotRecycledBelowThreshold(t *testing.T) {
	q := newTestQueue(10)
	defer q.ShutDown()
	before := q.current()
	for i := range 9 {
		q.Add(fmt.Sprint(i))
	}
	work(t, q, 9)
	if q.current() != before {
		t.Error("recycled after 9 adds, threshold 10")
	}
}

// TestRecyclingKeepsTheQueueContract runs workers and writers against a
// queue recycled every few adds: no key is processed by two workers at
// once, and every key added is processed after its last add.
func TestRecyclingKeepsTheQueueContract(t *testing.T) {
	q := newTestQueue(4)
	const keys, adds, workers = 20, 5000, 8
	var mu sync.Mutex
	busy := map[string]bool{}
	lastAdd := map[string]int{}   // key → sequence of its last add
	lastStart := map[string]int{} // key → sequence of the last add seen when its processing started
	seq := 0

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				if busy[item] {
					t.Errorf("key %s handed to two workers at once", item)
				}
				busy[item] = true
				lastStart[item] = seq
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
				mu.Lock()
				busy[item] = false
				mu.Unlock()
				q.Done(item)
			}
		})
	}
	for i := range adds {
		k := fmt.Sprint(rand.IntN(keys))
		mu.Lock()
		seq++
		lastAdd[k] = seq
		mu.Unlock()
		if i%50 == 49 {
			time.Sleep(time.Millisecond) // a pause, in which the queue may empty and be replaced
		}
		if i%7 == 0 {
			q.AddAfter(k, time.Millisecond)
		} else {
			prio := rand.IntN(3)
			q.AddWithOpts(priorityqueue.AddOpts{Priority: &prio}, k)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		var pending []string
		for k, a := range lastAdd {
			if lastStart[k] < a {
				pending = append(pending, k)
			}
		}
		mu.Unlock()
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keys added and never processed after: %v", pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	q.ShutDown()
	q.ShutDown() // a second call does nothing
	wg.Wait()
	if n := testutil.ToFloat64(recycled.WithLabelValues(q.name)); n == 0 {
		t.Error("the queue was never recycled")
	} else {
		t.Logf("recycled %.0f times", n)
	}
}

// BenchmarkDrainedQueueHeld queues 100,000 distinct keys (a restart's
// backlog at 100,000 templates) in a controller's queue, works them all
// off, and reports the heap the empty queue still holds per key:
// controller-runtime's priority queue keeps the room its maps grew to; the
// recycled one gives it back.
func BenchmarkDrainedQueueHeld(b *testing.B) {
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("scale/app-%07d-deployment", i)
	}
	for name, threshold := range map[string]int{"priorityqueue": math.MaxInt, "recycled": DefaultThreshold} {
		b.Run(name, func(b *testing.B) {
			var held uint64
			for range b.N {
				held = drainedHeld(keys, threshold)
			}
			b.ReportMetric(float64(held)/float64(len(keys)), "held-bytes/key")
		})
	}
}

func drainedHeld(keys []string, threshold int) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	q := New("held", workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second), logr.Discard())
	q.threshold = threshold
	defer q.ShutDown()
	for _, k := range keys {
		q.Add(k)
	}
	for range keys {
		item, _ := q.Get()
		q.Done(item)
	}
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(q)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
}
