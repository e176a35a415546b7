// Package queue gives controllers a priority queue whose memory follows
// what is queued now, not the most that ever was.
//
// controller-runtime's priority queue keeps its work in Go maps (the
// queued items, and for its metrics when each was added), and a Go map
// never gives back the room it grew to. A controller that has once queued
// every binding (a restart, a burst of 100,000 templates) keeps about 150
// bytes per binding in each queue after the queue has emptied, for as long
// as the process runs. Recycling replaces the empty queue with a new one
// once a large backlog has been worked off, so that room is collected
// (design 0013, decision 56).
package queue

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DefaultThreshold is how many adds a queue takes before it is replaced
// once empty: below it the room its maps keep is a few tens of kilobytes,
// and replacing a queue (a few maps, channels and goroutines) costs
// microseconds.
const DefaultThreshold = 1000

var recycled = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "atoll_workqueue_recycled_total",
	Help: "Work queues replaced by a new one once empty after a large backlog, so that the room the old one's maps grew to is freed, by queue name.",
}, []string{"name"})

func init() { ctrlmetrics.Registry.MustRegister(recycled) }

// NewQueue is a controller.Options.NewQueue: controller-runtime's
// priority queue, recycled.
func NewQueue[T comparable](log logr.Logger) func(string, workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	return func(name string, rateLimiter workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
		return New(name, rateLimiter, log.WithValues("controller", name))
	}
}

// New returns a recycled priority queue named name (its metrics' name),
// whose rate limiter is shared by every queue it is made of.
func New[T comparable](name string, rateLimiter workqueue.TypedRateLimiter[T], log logr.Logger) *Recycling[T] {
	return NewRecycling(name, DefaultThreshold, func() priorityqueue.PriorityQueue[T] {
		return priorityqueue.New(name, func(o *priorityqueue.Opts[T]) {
			o.RateLimiter = rateLimiter
			o.Log = log
		})
	})
}

// Recycling is a priority queue made of a sequence of them: when the
// current one is empty (nothing ready, nothing waiting for a delay or a
// backoff, nothing handed out and not done) after at least threshold adds,
// it is shut down and a new one takes its place. Nothing queued is lost and
// a key is never handed to two workers at once: a key the old queue
// handed out as it was replaced goes into the new one instead.
type Recycling[T comparable] struct {
	name      string
	threshold int
	newQueue  func() priorityqueue.PriorityQueue[T]

	mu    sync.Mutex
	inner priorityqueue.PriorityQueue[T]
	// adds counts the adds the inner queue took.
	adds int
	// delayed are the keys added with a delay or a backoff and not handed
	// out since: the inner queue holds them where Len does not count them.
	delayed map[T]struct{}
	// handed are the keys handed out whose Done has not come.
	handed   map[T]struct{}
	shutdown bool
}

// NewRecycling returns a Recycling queue of the queues newQueue returns,
// replaced once empty after threshold adds.
func NewRecycling[T comparable](name string, threshold int, newQueue func() priorityqueue.PriorityQueue[T]) *Recycling[T] {
	return &Recycling[T]{name: name, threshold: threshold, newQueue: newQueue, inner: newQueue(),
		delayed: map[T]struct{}{}, handed: map[T]struct{}{}}
}

var _ priorityqueue.PriorityQueue[int] = &Recycling[int]{}

// AddWithOpts adds items as the priority queue does.
func (q *Recycling[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if o.After > 0 || o.RateLimited {
		for _, k := range items {
			q.delayed[k] = struct{}{}
		}
	}
	q.adds += len(items)
	q.inner.AddWithOpts(o, items...)
}

// Add adds item.
func (q *Recycling[T]) Add(item T) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

// AddAfter adds item once after has passed.
func (q *Recycling[T]) AddAfter(item T, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

// AddRateLimited adds item once the rate limiter allows it.
func (q *Recycling[T]) AddRateLimited(item T) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// GetWithPriority blocks until an item is ready and hands it out, or the
// queue shuts down.
func (q *Recycling[T]) GetWithPriority() (T, int, bool) {
	for {
		q.mu.Lock()
		inner := q.inner
		q.mu.Unlock()
		item, priority, _ := inner.GetWithPriority()

		var zero T
		q.mu.Lock()
		switch {
		case q.shutdown:
			q.mu.Unlock()
			return zero, 0, true
		case inner != q.inner:
			// Replaced while this worker waited on it (only the
			// replacement shuts a current inner queue down). An item it
			// handed out as it was replaced, which it reports with its
			// shutdown, goes into the new queue: handing it out from the
			// old one could process one key twice at once (the new one may
			// hand the key to another worker already). No controller
			// queues the zero key.
			if item != zero {
				q.inner.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, item)
			}
			q.mu.Unlock()
			continue
		}
		delete(q.delayed, item)
		q.handed[item] = struct{}{}
		q.mu.Unlock()
		return item, priority, false
	}
}

// Get is GetWithPriority without the priority.
func (q *Recycling[T]) Get() (T, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// Done marks item processed; the queue is replaced if it is now empty
// after a large backlog.
func (q *Recycling[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.handed, item)
	q.inner.Done(item)
	if q.shutdown || q.adds < q.threshold || len(q.handed) > 0 || len(q.delayed) > 0 || q.inner.Len() > 0 {
		return
	}
	old := q.inner
	q.inner, q.adds = q.newQueue(), 0
	q.delayed, q.handed = map[T]struct{}{}, map[T]struct{}{}
	old.ShutDown()
	recycled.WithLabelValues(q.name).Inc()
}

// Forget ends item's backoff.
func (q *Recycling[T]) Forget(item T) { q.current().Forget(item) }

// NumRequeues is how often item was added rate limited since its Forget.
func (q *Recycling[T]) NumRequeues(item T) int { return q.current().NumRequeues(item) }

// Len is the number of items ready to be handed out.
func (q *Recycling[T]) Len() int { return q.current().Len() }

// ShuttingDown reports whether ShutDown was called.
func (q *Recycling[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

// ShutDown stops the queue: Get returns at once, adds are dropped. A
// second call does nothing.
func (q *Recycling[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shutdown {
		q.shutdown = true
		q.inner.ShutDown()
	}
}

// ShutDownWithDrain is ShutDown, as for the priority queue.
func (q *Recycling[T]) ShutDownWithDrain() { q.ShutDown() }

func (q *Recycling[T]) current() priorityqueue.PriorityQueue[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inner
}
