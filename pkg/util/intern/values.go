package intern

import (
	"encoding/json"
	"hash/maphash"
	"reflect"
	"sync"
)

// Values shares one copy of a struct that many cached objects repeat
// whole: every binding a policy claims carries a copy of the policy's
// placement and failover behaviour, and workloads of one shape the same
// replica requirements. Decoded, each copy is a tree of its own (a
// placement with weights and spread constraints is kilobytes; one
// resource request is a map of about 700 bytes).
//
// Like Maps it is a fixed number of slots, each holding the value last
// seen with its hash (of its JSON encoding): a value equal to its slot's
// (reflect.DeepEqual, so a hash collision never shares unequal values) is
// replaced by that one, any other takes the slot. Memory is bounded by the
// slots whatever the input. Shared values must never be changed: callers
// use Values only for objects that readers treat as read-only (informer
// caches, where the cache mutation detector checks it in tests), and Share
// itself only reads its argument.
type Values[T any] struct {
	seed maphash.Seed

	mu    sync.Mutex
	slots []*T
}

// hasher is a JSON encoder writing into a hash, kept for reuse.
type hasher struct {
	h   maphash.Hash
	enc *json.Encoder
}

var hashers = sync.Pool{New: func() any {
	e := &hasher{}
	e.enc = json.NewEncoder(&e.h)
	return e
}}

// NewValues returns a table of n slots.
func NewValues[T any](n int) *Values[T] {
	return &Values[T]{seed: maphash.MakeSeed(), slots: make([]*T, n)}
}

// Share returns the shared value equal to v when there is one, else v,
// which is then shared. nil, and values that do not encode, are returned
// as they are.
func (t *Values[T]) Share(v *T) *T {
	if v == nil {
		return nil
	}
	e := hashers.Get().(*hasher)
	defer hashers.Put(e)
	e.h.SetSeed(t.seed) // also resets it
	if err := e.enc.Encode(v); err != nil {
		return v
	}
	i := e.h.Sum64() % uint64(len(t.slots))
	t.mu.Lock()
	shared := t.slots[i]
	t.mu.Unlock()
	if shared != nil && (shared == v || reflect.DeepEqual(shared, v)) {
		return shared
	}
	t.mu.Lock()
	t.slots[i] = v
	t.mu.Unlock()
	return v
}
