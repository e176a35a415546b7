package rebalance

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// budget bounds the replicas in flight across every move of the fleet: a
// weight change on one policy can start thousands of moves, and each step
// adds pods on its targets before the sources shed theirs. A step reserves
// its replicas before it starts and returns them when it ends; a step that
// does not fit waits (the Rebalance shows Queued). The ledger is rebuilt
// from the Rebalance statuses after a restart (hold), so it survives one.
type budget struct {
	mu    sync.Mutex
	max   int32 // 0: unlimited
	held  map[types.NamespacedName]int32
	total int32
}

func newBudget(maxInFlight int32) *budget {
	return &budget{max: maxInFlight, held: map[types.NamespacedName]int32{}}
}

// reserve takes n replicas for key unless that would exceed the budget.
// A step larger than the whole budget may run alone.
func (b *budget) reserve(key types.NamespacedName, n int32) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	others := b.total - b.held[key]
	if b.max > 0 && others > 0 && others+n > b.max {
		return false
	}
	b.set(key, n)
	return true
}

// hold records what a step in progress holds (after a restart), even past
// the budget: it is already in flight.
func (b *budget) hold(key types.NamespacedName, n int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(key, n)
}

func (b *budget) release(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(key, 0)
}

func (b *budget) inFlight() int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *budget) set(key types.NamespacedName, n int32) {
	b.total += n - b.held[key]
	if n == 0 {
		delete(b.held, key)
	} else {
		b.held[key] = n
	}
}
