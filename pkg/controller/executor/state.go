package executor

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/expiring"
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
// 100,000 templates before). (A reconcile that reads a binding version its
// own write replaced is kept from writing by stalewrites, process-wide.)
type statusWrites struct {
	interval time.Duration
	last     *expiring.Times[types.NamespacedName]
}

func newStatusWrites(c clock.PassiveClock, interval time.Duration) *statusWrites {
	return &statusWrites{interval: interval, last: expiring.New[types.NamespacedName](c, interval)}
}

// wait is how long until the interval has passed since key's last write,
// 0 when it has.
func (w *statusWrites) wait(key types.NamespacedName) time.Duration {
	since, ok := w.last.Since(key)
	if !ok {
		return 0
	}
	return w.interval - since
}

// written records a write of key's status.
func (w *statusWrites) written(key types.NamespacedName) { w.last.Record(key) }

func (w *statusWrites) drop(key types.NamespacedName) { w.last.Forget(key) }
