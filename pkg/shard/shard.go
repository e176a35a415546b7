// Package shard splits atoll's per-template work between controller-manager
// processes. Every template (and its binding, which has the same key) falls
// into one of N shards by a stable hash; a process works only on the shards
// it holds through their Leases (see Leases), and a shard whose holder dies
// is taken over by another process once its Lease expires.
//
// A shard's key is the namespace and name of the template's binding
// (names.BindingName(kind, name)), so that a binding's request alone says
// whose it is: the detector (keyed by template), and the scheduler, executor,
// failover and dependencies controllers (keyed by binding) agree on every
// object without reading it.
package shard

import (
	"hash/fnv"
	"slices"
	"sync"
)

// Of is the shard of the binding namespace/name among n shards: FNV-1a
// (32 bit) of "namespace/name", modulo n. It never changes for a given n.
func Of(namespace, name string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(n))
}

// Owner is the set of shards this process holds. A nil Owner, or one of a
// single shard, holds everything: atoll up and a one-shard
// controller-manager behave exactly as without sharding.
//
// Work on an object happens between Enter and its leave func. Dropping a
// shard first refuses new work on it, then waits for the work in flight
// (Wait), so that the Lease is released only when this process no longer
// writes anything of that shard.
type Owner struct {
	n int

	mu        sync.RWMutex
	held      []bool
	listeners []func(shard int)

	// gates[s] is held for reading by work in flight on shard s.
	gates []sync.RWMutex
}

// NewOwner returns the owner of n shards (none held yet when n > 1).
func NewOwner(n int) *Owner {
	n = max(n, 1)
	o := &Owner{n: n, held: make([]bool, n), gates: make([]sync.RWMutex, n)}
	if n == 1 {
		o.held[0] = true
	}
	return o
}

// Sharded reports whether the work is split between processes.
func (o *Owner) Sharded() bool { return o != nil && o.n > 1 }

// NeedLeaderElection is a sharded controller's option: without sharding
// it runs on the elected leader only, sharded in every process.
func (o *Owner) NeedLeaderElection() *bool {
	need := !o.Sharded()
	return &need
}

// Shards is the number of shards (1 when not sharded).
func (o *Owner) Shards() int {
	if o == nil {
		return 1
	}
	return o.n
}

// Of is the shard of the binding namespace/name.
func (o *Owner) Of(namespace, name string) int { return Of(namespace, name, o.Shards()) }

// Holds reports whether this process holds shard s now.
func (o *Owner) Holds(s int) bool {
	if !o.Sharded() {
		return true
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return s >= 0 && s < o.n && o.held[s]
}

// Owns reports whether the binding namespace/name is in a shard this
// process holds now. Work that writes must use Enter instead.
func (o *Owner) Owns(namespace, name string) bool { return o.Holds(o.Of(namespace, name)) }

// Enter starts work on the binding namespace/name: ok is false when its
// shard is not held (do nothing then); otherwise call leave when done.
// Work must not Enter again before leaving (a drop in between would wait
// for it forever).
func (o *Owner) Enter(namespace, name string) (leave func(), ok bool) {
	if !o.Sharded() {
		return func() {}, true
	}
	s := o.Of(namespace, name)
	if !o.Holds(s) {
		// Checked before the gate too: a drop's wait holds new readers
		// back, and work of a dropped shard need not queue behind it.
		return func() {}, false
	}
	o.gates[s].RLock()
	if !o.Holds(s) {
		o.gates[s].RUnlock()
		return func() {}, false
	}
	return o.gates[s].RUnlock, true
}

// OnGain registers f, called (in its own goroutine) with every shard this
// process holds already and every shard it gains from then on: the
// controllers enqueue that shard's objects, whose events they skipped
// while another process held it.
func (o *Owner) OnGain(f func(shard int)) {
	if !o.Sharded() {
		return
	}
	o.mu.Lock()
	o.listeners = append(o.listeners, f)
	var held []int
	for s, h := range o.held {
		if h {
			held = append(held, s)
		}
	}
	o.mu.Unlock()
	for _, s := range held {
		go f(s)
	}
}

// gain marks s held and tells the listeners.
func (o *Owner) gain(s int) {
	o.mu.Lock()
	o.held[s] = true
	listeners := slices.Clone(o.listeners)
	o.mu.Unlock()
	for _, f := range listeners {
		go f(s)
	}
}

// drop refuses new work on s; Wait then waits for the work in flight.
func (o *Owner) drop(s int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held[s] = false
}

// Wait returns when no work entered before the last drop of s is in
// flight.
func (o *Owner) wait(s int) {
	o.gates[s].Lock()
	defer o.gates[s].Unlock()
}

// heldShards lists the shards held now.
func (o *Owner) heldShards() []int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []int
	for s, h := range o.held {
		if h {
			out = append(out, s)
		}
	}
	return out
}
