package templatemeta

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Source is a controller-runtime source of gvr's metadata events through
// h: it acquires the shared informer when the controller starts, and
// releases it (its handler removed) when the controller stops. The
// controller's workers start once the handler has seen the initial list;
// initial-list events are marked so (a priority queue puts them behind
// new ones).
func (i *Informers) Source(gvr schema.GroupVersionResource, h handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request]) source.SyncingSource {
	return &metaSource{informers: i, gvr: gvr, handler: h}
}

type metaSource struct {
	informers *Informers
	gvr       schema.GroupVersionResource
	handler   handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request]

	mu  sync.Mutex
	reg toolscache.ResourceEventHandlerRegistration
}

func (s *metaSource) String() string { return "metadata of " + s.gvr.String() }

func (s *metaSource) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	inf, release := s.informers.Acquire(s.gvr)
	reg, err := inf.AddEventHandler(eventHandler{ctx: ctx, handler: s.handler, queue: queue})
	if err != nil {
		release()
		return fmt.Errorf("%s: %w", s, err)
	}
	s.mu.Lock()
	s.reg = reg
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		_ = inf.RemoveEventHandler(reg)
		release()
	}()
	return nil
}

func (s *metaSource) WaitForSync(ctx context.Context) error {
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if reg == nil {
		return errors.New(s.String() + ": not started")
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return fmt.Errorf("%s: not synced: %w", s, context.Cause(ctx))
	}
	return nil
}

// eventHandler turns informer notifications into the typed events
// controller-runtime's handlers take.
type eventHandler struct {
	ctx     context.Context
	handler handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request]
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func (e eventHandler) OnAdd(obj any, isInInitialList bool) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		e.handler.Create(e.ctx, event.TypedCreateEvent[*metav1.PartialObjectMetadata]{Object: m, IsInInitialList: isInInitialList}, e.queue)
	}
}

func (e eventHandler) OnUpdate(oldObj, newObj any) {
	o, ok1 := oldObj.(*metav1.PartialObjectMetadata)
	n, ok2 := newObj.(*metav1.PartialObjectMetadata)
	if ok1 && ok2 {
		e.handler.Update(e.ctx, event.TypedUpdateEvent[*metav1.PartialObjectMetadata]{ObjectOld: o, ObjectNew: n}, e.queue)
	}
}

func (e eventHandler) OnDelete(obj any) {
	unknown := false
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, unknown = t.Obj, true
	}
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		e.handler.Delete(e.ctx, event.TypedDeleteEvent[*metav1.PartialObjectMetadata]{Object: m, DeleteStateUnknown: unknown}, e.queue)
	}
}

// Get returns the cached metadata of namespace/name from gvr's informer,
// which the caller holds and which has synced; nil when there is none.
// The object is the cache's: read it, never change it.
func Get(inf toolscache.SharedIndexInformer, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	obj, exists, err := inf.GetIndexer().GetByKey(toolscache.ObjectName{Namespace: namespace, Name: name}.String())
	if err != nil || !exists {
		return nil, err
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("cached %T is not metadata", obj)
	}
	return m, nil
}
