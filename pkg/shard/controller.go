package shard

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Reconciler runs r only for requests of the shards o holds; others return
// at once with nothing done. key names the binding a request is about.
// Without sharding it returns r itself.
func Reconciler[T comparable](o *Owner, key func(T) (namespace, name string), r reconcile.TypedReconciler[T]) reconcile.TypedReconciler[T] {
	if !o.Sharded() {
		return r
	}
	return reconcile.TypedFunc[T](func(ctx context.Context, req T) (reconcile.Result, error) {
		leave, ok := o.Enter(key(req))
		if !ok {
			return reconcile.Result{}, nil
		}
		defer leave()
		return r.Reconcile(ctx, req)
	})
}

// RequestKey is the key of a request for a binding.
func RequestKey(req reconcile.Request) (string, string) { return req.Namespace, req.Name }

// Source is a controller source that, each time this process gains a
// shard, calls each to add the requests of that shard (retrying with
// backoff until each succeeds or ctx ends). Without sharding it adds
// nothing: the informers' initial lists do that job.
func Source[T comparable](o *Owner, each func(ctx context.Context, shard int, add func(T)) error) source.TypedSource[T] {
	return source.TypedFunc[T](func(ctx context.Context, q workqueue.TypedRateLimitingInterface[T]) error {
		o.OnGain(func(s int) {
			backoff := 100 * time.Millisecond
			for {
				err := each(ctx, s, func(req T) { q.Add(req) })
				if err == nil {
					return
				}
				klog.FromContext(ctx).Error(err, "Enqueueing a gained shard; retrying", "shard", s)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 10*time.Second)
			}
		})
		return nil
	})
}

// BindingSource enqueues, for each gained shard, the objects of list's
// kind in that shard (their own namespace/name is the key: bindings).
func BindingSource(o *Owner, r client.Reader, newList func() client.ObjectList) source.Source {
	return Source(o, func(ctx context.Context, s int, add func(reconcile.Request)) error {
		list := newList()
		if err := r.List(ctx, list); err != nil {
			return err
		}
		return meta.EachListItem(list, func(obj runtime.Object) error {
			m, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			if Of(m.GetNamespace(), m.GetName(), o.Shards()) == s {
				add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}})
			}
			return nil
		})
	})
}
