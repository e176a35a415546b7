package executor

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// knownSet remembers keys already done once (a member's watched GVRs, its
// namespaces known to exist), so neither costs a request twice.
type knownSet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func newKnownSet() *knownSet { return &knownSet{keys: map[string]bool{}} }

// mark records key and reports whether it is new.
func (k *knownSet) mark(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys[key] {
		return false
	}
	k.keys[key] = true
	return true
}

func (k *knownSet) unmark(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.keys, key)
}

// reachedClusters remembers, per binding, the clusters an object was applied
// to or seen in since the process started: with the status, the clusters a
// withdrawal must visit even when the status write lagged behind. One entry
// per binding lives as long as the process, so a binding's clusters are a
// short sorted slice (the cluster names are the members' own strings,
// shared), not a map of their own.
type reachedClusters struct {
	mu      sync.Mutex
	applied map[types.NamespacedName][]string
}

func newReachedClusters() *reachedClusters {
	return &reachedClusters{applied: map[types.NamespacedName][]string{}}
}

func (m *reachedClusters) remember(key types.NamespacedName, cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clusters := m.applied[key]
	i, found := slices.BinarySearch(clusters, cluster)
	if !found {
		m.applied[key] = slices.Insert(clusters, i, cluster)
	}
}

// drop forgets a binding that is gone.
func (m *reachedClusters) drop(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.applied, key)
}

func (m *reachedClusters) forget(key types.NamespacedName, cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clusters := m.applied[key]
	i, found := slices.BinarySearch(clusters, cluster)
	switch {
	case !found:
	case len(clusters) == 1:
		delete(m.applied, key)
	default:
		m.applied[key] = slices.Delete(clusters, i, i+1)
	}
}

// of lists the clusters a binding's object may be in: those its status
// lists and those remembered since start, sorted.
func (m *reachedClusters) of(key types.NamespacedName, status *workv1alpha2.ResourceBindingStatus) []string {
	m.mu.Lock()
	out := slices.Clone(m.applied[key])
	m.mu.Unlock()
	for _, item := range status.AggregatedStatus {
		out = append(out, item.ClusterName)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// statusWrites remembers when each binding's status was last written, for
// coalescing. A write older than the interval no longer holds anything
// back, so it is forgotten: the map holds about the bindings written in the
// last two intervals, not every binding ever written (100,000 entries at
// 100,000 templates before).
type statusWrites struct {
	mu        sync.Mutex
	clock     clock.PassiveClock
	interval  time.Duration
	last      map[types.NamespacedName]statusWrite
	lastSweep time.Time
}

// statusWrite is one write of a binding's status by this process.
type statusWrite struct {
	at time.Time
	// over is the resourceVersion the write replaced: a cache that still
	// shows it has not seen the write yet.
	over string
}

func newStatusWrites(c clock.PassiveClock, interval time.Duration) *statusWrites {
	return &statusWrites{clock: c, interval: interval, last: map[types.NamespacedName]statusWrite{}, lastSweep: c.Now()}
}

// wait is how long until the interval has passed since key's last write,
// 0 when it has.
func (w *statusWrites) wait(key types.NamespacedName) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.last[key]
	if !ok {
		return 0
	}
	return max(0, w.interval-w.clock.Since(last.at))
}

// written records a write of key's status that replaced resourceVersion
// over.
func (w *statusWrites) written(key types.NamespacedName, over string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.last[key] = statusWrite{at: now, over: over}
	if now.Sub(w.lastSweep) < w.interval {
		return
	}
	// At most one sweep per interval, over the writes of about two: O(1)
	// per write amortised. Into a new map, since Go maps keep their peak
	// size after deletes.
	kept := make(map[types.NamespacedName]statusWrite)
	for k, last := range w.last {
		if now.Sub(last.at) < w.interval {
			kept[k] = last
		}
	}
	w.last, w.lastSweep = kept, now
}

// maxCacheLag bounds how long the cache is taken to be behind a status
// write, whatever the coalescing window: a cache that is later than that
// has a broken watch, and believing it (a write that may lose its race)
// beats holding every status write of the binding back.
const maxCacheLag = 10 * time.Second

// behind reports whether a binding the cache shows at resourceVersion rv
// is the version this process's last write of its status replaced, less
// than an interval (at most maxCacheLag) ago: the cache has not seen that
// write yet. (A resourceVersion names one version of one object, so an
// equal one is that version; later the cache is believed, as before.)
func (w *statusWrites) behind(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.last[key]
	return ok && rv != "" && last.over == rv && w.clock.Since(last.at) < min(w.interval, maxCacheLag)
}

func (w *statusWrites) drop(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}
