package interpreter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
)

// targetIndex indexes the informer's customizations by targetKey.
const targetIndex = "atoll.dev/customization-target"

// IndexSource reads customizations straight from their informer's store,
// through an index by target kind. The interpreter looks them up several
// times per binding and member, so the lookup is a map read: a List
// through the manager's cache (reflection, field-selector parsing, a list
// built per call) was 3.4 s of a 100,000-template restart's CPU with no
// customization defined (design 0013, decision 31). The store is what the
// informer updates before any of its handlers hears of a change, so a
// binding that a customization's event enqueued is reconciled with the
// changed customization; a map kept by a handler of its own was not
// (decision 31).
type IndexSource struct {
	informer toolscache.SharedIndexInformer
}

// NewIndexSource indexes informer's customizations by target kind. Call
// it before the informer starts (the manager's cache starts its informers
// with the manager).
func NewIndexSource(informer toolscache.SharedIndexInformer) (*IndexSource, error) {
	if err := informer.AddIndexers(toolscache.Indexers{targetIndex: indexByTarget}); err != nil {
		return nil, fmt.Errorf("indexing ResourceInterpreterCustomizations by target: %w", err)
	}
	return &IndexSource{informer: informer}, nil
}

func indexByTarget(obj any) ([]string, error) {
	ric, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
	if !ok {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(ric.Spec.Target.APIVersion)
	if err != nil {
		return nil, nil // names no kind; validation reports it
	}
	return []string{targetKey(gv.WithKind(ric.Spec.Target.Kind))}, nil
}

func targetKey(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + "/" + gvk.Kind
}

// ForKind returns the customizations targeting gvk as the informer holds
// them (shared: never changed). Until the informer has listed it waits, as
// a read through the manager's cache does, so that no binding is
// interpreted without the customizations that exist.
func (s *IndexSource) ForKind(ctx context.Context, gvk schema.GroupVersionKind) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	if !s.informer.HasSynced() && !toolscache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return nil, fmt.Errorf("waiting for the ResourceInterpreterCustomization cache: %w", context.Cause(ctx))
	}
	objs, err := s.informer.GetIndexer().ByIndex(targetIndex, targetKey(gvk))
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	out := make([]*configv1alpha1.ResourceInterpreterCustomization, 0, len(objs))
	for _, o := range objs {
		if ric, ok := o.(*configv1alpha1.ResourceInterpreterCustomization); ok {
			out = append(out, ric)
		}
	}
	return out, nil
}
