package intern

import (
	"hash/maphash"
	"maps"
	"sync"
)

// Maps shares one copy of the label and annotation maps that many cached
// objects repeat whole: templates of one application or one policy carry
// the same labels (app, team, the claiming policy's id) and the same claim
// annotations, and each decoded copy is a map of its own, about 300 bytes
// before its strings.
//
// It is a fixed number of slots, each holding the map last seen with its
// contents' hash: a map equal to its slot's is replaced by that one, any
// other takes the slot. Memory is bounded by the slots whatever the input;
// maps that repeat stay shared while unique ones pass through, and a
// common map evicted by a unique one is shared again from its next
// occurrence. Shared maps must never be changed, not even by a delete of a
// key they do not hold (Go counts it as a write): callers use Maps only for
// objects that readers treat as read-only (informer caches), and a
// transform that client-go runs twice on one object (its streaming list
// does) must only read what its first pass returned. Map itself only reads
// its argument, so passing it a shared map is safe.
type Maps struct {
	strings *Table
	seed    maphash.Seed

	mu    sync.Mutex
	slots []map[string]string
}

// NewMaps returns a table of n slots whose maps' keys (and, where value
// says so, values) are interned in strings.
func NewMaps(strings *Table, n int) *Maps {
	return &Maps{strings: strings, seed: maphash.MakeSeed(), slots: make([]map[string]string, n)}
}

// DefaultMaps is the process's table: 4,096 slots, keys in Default.
var DefaultMaps = NewMaps(Default, 1<<12)

// Map returns the shared map equal to m when there is one, else m's copy
// with interned strings (Table.Map), which is then shared. nil and empty
// maps are returned as they are.
func (t *Maps) Map(m map[string]string, value func(key string) bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	i := t.hash(m) % uint64(len(t.slots))
	t.mu.Lock()
	shared := t.slots[i]
	t.mu.Unlock()
	if shared != nil && maps.Equal(shared, m) {
		return shared
	}
	out := t.strings.Map(m, value)
	t.mu.Lock()
	t.slots[i] = out
	t.mu.Unlock()
	return out
}

// hash is the same for equal maps whatever their iteration order: the sum
// of the hashes of their pairs.
func (t *Maps) hash(m map[string]string) uint64 {
	var sum uint64
	var h maphash.Hash
	h.SetSeed(t.seed)
	for k, v := range m {
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum
}
