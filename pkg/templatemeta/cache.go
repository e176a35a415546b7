package templatemeta

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// ForCache returns gvr's shared informer for a controller-runtime cache,
// whose informer constructor (cache.Options.NewInformer) may hand out an
// informer that is already running. The cache configures and runs what it
// is given; the wrapper takes the informer now and gives it back when the
// cache's Run returns, keeps the shared transform (which drops more than a
// cache's managedFields transform), ignores a watch error handler (the
// informer has started), and adds only the indexers it does not have (the
// namespace index every informer here has already).
//
// Only for cache entries that list every namespace with no selector: the
// shared informer lists everything.
func (i *Informers) ForCache(gvr schema.GroupVersionResource) toolscache.SharedIndexInformer {
	inf, release := i.Acquire(gvr)
	return &cacheInformer{SharedIndexInformer: inf, release: release}
}

type cacheInformer struct {
	toolscache.SharedIndexInformer
	release func()
}

func (c *cacheInformer) Run(stopCh <-chan struct{}) {
	<-stopCh
	c.release()
}

func (c *cacheInformer) RunWithContext(ctx context.Context) {
	<-ctx.Done()
	c.release()
}

func (c *cacheInformer) SetTransform(toolscache.TransformFunc) error { return nil }

func (c *cacheInformer) SetWatchErrorHandler(toolscache.WatchErrorHandler) error { return nil }

func (c *cacheInformer) SetWatchErrorHandlerWithContext(toolscache.WatchErrorHandlerWithContext) error {
	return nil
}

func (c *cacheInformer) AddIndexers(indexers toolscache.Indexers) error {
	have := c.GetIndexer().GetIndexers()
	add := toolscache.Indexers{}
	for name, f := range indexers {
		if _, ok := have[name]; !ok {
			add[name] = f
		}
	}
	if len(add) == 0 {
		return nil
	}
	return c.SharedIndexInformer.AddIndexers(add)
}
