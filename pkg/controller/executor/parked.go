package executor

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// parked holds the bindings that met a member cache still making its first
// list (design 0013, decision 17), or whose template is in a list under way
// (templateLists). Each waits without a worker and without
// coming back on a timer: one goroutine per listing cache watches it and,
// once the list is in (or has failed: past its grace, or the member
// rebuilt), enqueues every binding parked on it, at low priority like the
// list's own events. Before this each such binding held a worker for up to
// a second and then came back every two seconds.
type parked struct {
	// ctx ends with the process: then what waits is dropped (a new
	// process lists again).
	ctx context.Context
	// poll is how often a listing cache is looked at.
	poll    time.Duration
	enqueue func(reconcile.Request)
	// count is the number parked, exported: work that waits here is in
	// no queue, so "every queue empty" does not mean idle without it.
	count prometheus.Gauge

	mu      sync.Mutex
	byCache map[string]map[reconcile.Request]struct{}
}

func newParked(ctx context.Context, poll time.Duration, enqueue func(reconcile.Request), count prometheus.Gauge) *parked {
	return &parked{ctx: ctx, poll: poll, enqueue: enqueue, count: count, byCache: map[string]map[reconcile.Request]struct{}{}}
}

// park holds req until listing (the list named cacheKey is still under
// way) turns false, then enqueues it.
func (p *parked) park(cacheKey string, req reconcile.Request, listing func() bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if waiting, ok := p.byCache[cacheKey]; ok {
		if _, already := waiting[req]; !already {
			waiting[req] = struct{}{}
			p.count.Inc()
		}
		return
	}
	p.byCache[cacheKey] = map[reconcile.Request]struct{}{req: {}}
	p.count.Inc()
	go p.wait(cacheKey, listing)
}

func (p *parked) wait(cacheKey string, listing func() bool) {
	t := time.NewTicker(p.poll)
	defer t.Stop()
	for listing() {
		select {
		case <-p.ctx.Done():
			// Shutting down: the bindings are not lost, a new process
			// lists them again.
			p.mu.Lock()
			p.count.Sub(float64(len(p.byCache[cacheKey])))
			delete(p.byCache, cacheKey)
			p.mu.Unlock()
			return
		case <-t.C:
		}
	}
	p.mu.Lock()
	waiting := p.byCache[cacheKey]
	delete(p.byCache, cacheKey)
	p.count.Sub(float64(len(waiting)))
	p.mu.Unlock()
	for req := range waiting {
		p.enqueue(req)
	}
}

// len is the number of bindings parked (for tests).
func (p *parked) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, waiting := range p.byCache {
		n += len(waiting)
	}
	return n
}
