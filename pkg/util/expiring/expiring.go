// Package expiring remembers, per key, when something last happened, for
// a fixed time: a record that stays about the size of its recent past,
// not of every key it ever saw (issue 14: the executor's record of status
// writes once held one entry per binding, 100,000 at 100,000 templates).
package expiring

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Times holds, for ttl, when each key was last recorded. It is safe for
// concurrent use.
type Times[K comparable] struct {
	mu        sync.Mutex
	clock     clock.PassiveClock
	ttl       time.Duration
	at        map[K]time.Time
	lastSweep time.Time
}

// New returns an empty Times on clock c (nil: the real clock) that forgets
// a key ttl after it was last recorded.
func New[K comparable](c clock.PassiveClock, ttl time.Duration) *Times[K] {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Times[K]{clock: c, ttl: ttl, at: map[K]time.Time{}, lastSweep: c.Now()}
}

// Record notes that k happened now.
func (t *Times[K]) Record(k K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	t.at[k] = now
	if now.Sub(t.lastSweep) < t.ttl {
		return
	}
	// At most one sweep per ttl, over the records of about two: O(1) per
	// record amortised. Into a new map, since Go maps keep their peak size
	// after deletes (and so without the old size as a hint). Nothing
	// sweeps without records, so after a burst the last ttl or two of them
	// stay until the next one.
	kept := make(map[K]time.Time)
	for key, at := range t.at {
		if now.Sub(at) < t.ttl {
			kept[key] = at
		}
	}
	t.at, t.lastSweep = kept, now
}

// Since is how long ago k was last recorded; false when it was not
// recorded within the ttl.
func (t *Times[K]) Since(k K) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.at[k]
	if !ok {
		return 0, false
	}
	since := t.clock.Since(at)
	return since, since < t.ttl
}

// Forget drops k's record.
func (t *Times[K]) Forget(k K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.at, k)
}

// Len is how many keys are held, expired ones not yet swept included.
func (t *Times[K]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.at)
}
