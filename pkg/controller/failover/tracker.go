package failover

import (
	"slices"
	"sync"
	"time"
)

// unhealthyTracker remembers since when a binding's resource has been
// Unhealthy on each cluster. It lives in memory, as Karmada's does: after a
// restart the toleration starts again, which errs on the side of not
// moving.
type unhealthyTracker struct {
	mu    sync.Mutex
	since map[string]map[string]time.Time // binding key → cluster → first seen unhealthy
}

func newUnhealthyTracker() *unhealthyTracker {
	return &unhealthyTracker{since: map[string]map[string]time.Time{}}
}

// unhealthySince records that the resource is unhealthy on cluster now and
// returns since when it has been.
func (t *unhealthyTracker) unhealthySince(binding, cluster string, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.since[binding]
	if m == nil {
		m = map[string]time.Time{}
		t.since[binding] = m
	}
	if s, ok := m[cluster]; ok {
		return s
	}
	m[cluster] = now
	return now
}

// healthy forgets the cluster's unhealthy streak.
func (t *unhealthyTracker) healthy(binding, cluster string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.since[binding], cluster)
}

// keepOnly forgets the clusters the binding is no longer scheduled to.
func (t *unhealthyTracker) keepOnly(binding string, clusters []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.since[binding] {
		if !slices.Contains(clusters, c) {
			delete(t.since[binding], c)
		}
	}
	if len(t.since[binding]) == 0 {
		delete(t.since, binding)
	}
}

func (t *unhealthyTracker) forgetBinding(binding string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.since, binding)
}
