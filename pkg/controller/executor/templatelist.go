package executor

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/templatecache"
)

// templateLists fills the template cache with one list per resource
// instead of one GET per binding (design 0013, decision 18). The detector
// puts each template it reads into the cache, so a running process rarely
// misses; a restarted one misses for every binding, since the detector
// reads no template whose binding is up to date. At 20,000 templates that
// was 20,000 GETs against the control plane while it was busiest. The
// first miss for a resource lists, in pages, the templates of that
// resource a policy claims (labelled with a policy's permanent ID) and
// puts each under its binding's key and its own resourceVersion: a binding
// recording that version finds it, any other still reads its template
// with a GET. Once per resource and process; misses for the resource while
// the list runs are parked until it is done rather than GET what it is
// about to bring.
type templateLists struct {
	// ctx ends with the process; the lists run under it.
	ctx context.Context
	// client lists templates as packed JSON (clustercache.NewWireClient).
	client    rest.Interface
	templates *templatecache.Cache
	// shards, when set, limits the cache to the bindings this process
	// holds.
	shards *shard.Owner

	mu     sync.Mutex
	listed map[schema.GroupVersionResource]chan struct{}
}

func newTemplateLists(ctx context.Context, client rest.Interface, templates *templatecache.Cache, shards *shard.Owner) *templateLists {
	return &templateLists{ctx: ctx, client: client, templates: templates, shards: shards, listed: map[schema.GroupVersionResource]chan struct{}{}}
}

// listing reports whether the list of mapping's templates is under way,
// starting it if this process has not listed that resource yet. While it
// is, a binding that missed the cache waits for it (parked, without a
// worker); once it is done, a binding that still misses reads its template
// with a GET.
func (l *templateLists) listing(mapping *meta.RESTMapping) bool {
	if l == nil {
		return false
	}
	gvr := mapping.Resource
	l.mu.Lock()
	done, started := l.listed[gvr]
	if !started {
		done = make(chan struct{})
		l.listed[gvr] = done
	}
	l.mu.Unlock()
	if !started {
		go l.run(mapping, done) // it outlives the reconcile that starts it
	}
	return !finished(done)
}

// underWay reports whether the list of gvr's templates has started and not
// finished.
func (l *templateLists) underWay(gvr schema.GroupVersionResource) bool {
	l.mu.Lock()
	done, started := l.listed[gvr]
	l.mu.Unlock()
	return started && !finished(done)
}

// finished reports whether a list's done channel is closed.
func finished(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func (l *templateLists) run(mapping *meta.RESTMapping, done chan struct{}) {
	defer close(done)
	ctx := l.ctx
	gvr := mapping.Resource
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	n, err := l.list(ctx, gvr, mapping.GroupVersionKind.Kind, namespaced)
	if err != nil {
		// Not retried: the bindings read their templates one by one, as
		// they would without this.
		klog.FromContext(ctx).Error(err, "Listing templates for the template cache", "resource", gvr.String(), "listed", n)
		return
	}
	klog.FromContext(ctx).V(1).Info("Listed templates into the template cache", "resource", gvr.String(), "templates", n)
}

func (l *templateLists) list(ctx context.Context, gvr schema.GroupVersionResource, kind string, namespaced bool) (int, error) {
	n := 0
	for _, label := range names.ClaimLabels {
		opts := metav1.ListOptions{LabelSelector: label, Limit: 500}
		for {
			// The items arrive as packed JSON with their metadata read,
			// as a member's objects do (clustercache/wire.go): no item is
			// decoded whole or encoded again.
			page, err := clustercache.ListObjects(ctx, l.client, gvr, kind, opts)
			if err != nil {
				return n, fmt.Errorf("listing %s with %s: %w", gvr.Resource, label, err)
			}
			for i := range page.Items {
				t := &page.Items[i]
				key := types.NamespacedName{Name: names.BindingName(kind, t.GetName())}
				if namespaced {
					key.Namespace = t.GetNamespace()
				}
				if !l.shards.Owns(key.Namespace, key.Name) {
					continue
				}
				l.templates.PutPacked(key, t.GetResourceVersion(), t.Packed())
				n++
			}
			if opts.Continue = page.Continue; opts.Continue == "" {
				break
			}
		}
	}
	return n, nil
}
