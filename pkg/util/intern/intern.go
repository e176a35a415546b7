// Package intern shares one copy of the strings that many cached objects
// repeat: label and annotation keys, policy names, cluster names, condition
// reasons and messages. Every object an informer decodes gets fresh copies
// of them; at 100,000 bindings those copies are a fifth of a binding's
// memory (issue 14).
//
// A Table is bounded: once it holds its limit of strings it stops adding
// and returns strings as they are, so high-cardinality input (a unique
// label value per object) costs at most the limit, never a table that
// grows with the objects. Callers intern only fields whose values repeat.
package intern

import (
	"sync"
	"unsafe"
)

// Table is a bounded set of canonical strings, safe for concurrent use.
type Table struct {
	mu      sync.RWMutex
	strings map[string]string
	limit   int
	maxLen  int
}

// New returns a table that keeps at most limit strings, each at most
// maxLen bytes.
func New(limit, maxLen int) *Table {
	return &Table{strings: make(map[string]string), limit: limit, maxLen: maxLen}
}

// Default is the process's table: 16,384 strings of at most 256 bytes,
// at most 4 MB of string data.
var Default = New(1<<14, 256)

// String returns the table's copy of s, adding s when there is room; s
// itself when it is too long or the table is full.
func (t *Table) String(s string) string {
	if s == "" || len(s) > t.maxLen {
		return s
	}
	t.mu.RLock()
	c, ok := t.strings[s]
	t.mu.RUnlock()
	if ok {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.strings[s]; ok {
		return c
	}
	if len(t.strings) >= t.limit {
		return s
	}
	t.strings[s] = s
	return s
}

// Map returns m with every key interned and, where value(key) says so, its
// value too. It builds a new map (keys cannot be replaced in place) unless
// m holds the table's copies already (a transform run twice on one object:
// client-go's streaming list), when it returns m; nil stays nil.
func (t *Table) Map(m map[string]string, value func(key string) bool) map[string]string {
	if m == nil || t.holds(m, value) {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if value != nil && value(k) {
			v = t.String(v)
		}
		out[t.String(k)] = v
	}
	return out
}

// holds reports whether every key of m, and every value value(key)
// chooses, is the table's own copy (or a string the table never holds).
// It gives up at the first that is not: a fresh map costs one lookup.
func (t *Table) holds(m map[string]string, value func(key string) bool) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	own := func(s string) bool {
		if s == "" || len(s) > t.maxLen {
			return true // String returns it as it is
		}
		c, ok := t.strings[s]
		return ok && unsafe.StringData(c) == unsafe.StringData(s)
	}
	for k, v := range m {
		if !own(k) || value != nil && value(k) && !own(v) {
			return false
		}
	}
	return true
}

// Len is the number of strings held.
func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.strings)
}
