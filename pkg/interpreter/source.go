package interpreter

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
)

// InformerSource keeps the customizations by target kind, fed by the
// handlers of an informer on ResourceInterpreterCustomizations. The
// executor looks customizations up several times per binding and member;
// each lookup used to be a List through the manager cache's field index,
// which at 100,000 bindings was over a quarter of the executor's restart
// pass with no customization defined (design 0013, decision 31). Now it is
// a map read.
type InformerSource struct {
	synced func() bool
	ready  atomic.Bool

	mu sync.RWMutex
	// byKind is each target kind's customizations, sorted by name. A
	// slice is replaced on change, never modified: ForKind hands it out.
	byKind map[schema.GroupVersionKind][]configv1alpha1.ResourceInterpreterCustomization
	// kindOf is the kind each customization is filed under, by name.
	kindOf map[string]schema.GroupVersionKind
}

// HandlerRegistrar is the part of an informer InformerSource needs (a
// controller-runtime cache's informer, or client-go's).
type HandlerRegistrar interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// NewInformerSource registers the source's handlers on informer.
func NewInformerSource(informer HandlerRegistrar) (*InformerSource, error) {
	s := &InformerSource{
		byKind: map[schema.GroupVersionKind][]configv1alpha1.ResourceInterpreterCustomization{},
		kindOf: map[string]schema.GroupVersionKind{},
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.put(obj) },
		UpdateFunc: func(_, obj any) { s.put(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if ric, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); ok {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.remove(ric.Name)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	s.synced = reg.HasSynced
	return s, nil
}

// ForKind returns the customizations targeting gvk, sorted by name; the
// slice is shared and must not be modified. Until the informer's first
// list has reached the handlers it waits, as a List through the cache
// does: no customization must look absent because it was not read yet.
func (s *InformerSource) ForKind(ctx context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	if !s.ready.Load() {
		if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
			return s.synced(), nil
		}); err != nil {
			return nil, err
		}
		s.ready.Store(true)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byKind[gvk], nil
}

func (s *InformerSource) put(obj any) {
	ric, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(ric.Name)
	gv, err := schema.ParseGroupVersion(ric.Spec.Target.APIVersion)
	if err != nil {
		// Nothing can target such a kind; admission rejects it anyway.
		return
	}
	gvk := gv.WithKind(ric.Spec.Target.Kind)
	list := append(slices.Clone(s.byKind[gvk]), *ric)
	slices.SortFunc(list, func(a, b configv1alpha1.ResourceInterpreterCustomization) int { return strings.Compare(a.Name, b.Name) })
	s.byKind[gvk] = list
	s.kindOf[ric.Name] = gvk
}

// remove drops the customization named name; s.mu is held.
func (s *InformerSource) remove(name string) {
	gvk, ok := s.kindOf[name]
	if !ok {
		return
	}
	delete(s.kindOf, name)
	list := slices.DeleteFunc(slices.Clone(s.byKind[gvk]), func(c configv1alpha1.ResourceInterpreterCustomization) bool { return c.Name == name })
	if len(list) == 0 {
		delete(s.byKind, gvk)
		return
	}
	s.byKind[gvk] = list
}
