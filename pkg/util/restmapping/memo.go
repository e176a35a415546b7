// Package restmapping remembers a RESTMapper's answers to RESTMapping.
//
// Controllers ask for the mapping of a kind for every object they handle,
// and controller-runtime's cache asks again on every Get of a
// namespace-restricted kind. Both the manager's mapper (a
// PriorityRESTMapper over every API group) and a member's (discovery
// behind a lock) take 10–30 µs a question on this machine; a
// 20,000-template restart asked about 150,000 questions, 7 % of its CPU
// (design 0013, decision 24).
package restmapping

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Memo is a RESTMapper that answers RESTMapping from memory once its
// delegate has answered it. It forgets everything when a question fails
// or it is Reset: a failed question is where the delegate mappers of
// client-go and controller-runtime go back to discovery, after which a
// remembered answer (a custom resource's versions or scope) may have
// changed. Every other method is the delegate's.
type Memo struct {
	meta.RESTMapper
	mappings sync.Map // question → *meta.RESTMapping
}

type question struct {
	gk       schema.GroupKind
	versions string
}

// Memoize returns a Memo over m.
func Memoize(m meta.RESTMapper) *Memo {
	return &Memo{RESTMapper: m}
}

// RESTMapping implements meta.RESTMapper. Callers get a copy of the
// remembered mapping.
func (m *Memo) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	q := question{gk: gk}
	switch len(versions) {
	case 0:
	case 1:
		q.versions = versions[0]
	default:
		q.versions = strings.Join(versions, ",")
	}
	if v, ok := m.mappings.Load(q); ok {
		mapping := *v.(*meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		m.mappings.Clear()
		return nil, err
	}
	remembered := *mapping
	m.mappings.Store(q, &remembered)
	return mapping, nil
}

// Reset implements meta.ResettableRESTMapper: it forgets, and resets the
// delegate when it can be.
func (m *Memo) Reset() {
	m.mappings.Clear()
	if r, ok := m.RESTMapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}
