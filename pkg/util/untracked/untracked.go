// Package untracked keeps the API server from recording field ownership
// (metadata.managedFields) for kinds only atoll writes.
//
// The API server keeps, in every object, which manager last set which
// field. For a ResourceBinding that record is about half of the object: at
// 100,000 templates it is half of every binding in etcd, in the API
// server's watch cache, and in every watch event and list that serves one,
// each encoded to JSON from its unstructured form (most of the control
// plane's CPU in a controller-manager's restart), and the API server
// computes it again on every status write. Nothing reads it: atoll does not
// server-side apply bindings.
//
// A write other than an apply that sets managedFields to one empty entry
// clears the record, and once it is empty the API server does not start it
// again for writes other than applies (its field manager skips them).
// So every merge patch and update of those kinds through the client
// carries the reset: the first one after the binding's create clears the
// record, the later ones change nothing. A create cannot clear it (the API
// server records the creator regardless), and the status subresource
// ignores the reset; neither matters once the first write has cleared it.
// An apply by someone else starts the record again, and atoll's next write
// clears it.
package untracked

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Writes returns c whose updates and merge patches of kinds clear their
// field-ownership record. It must wrap any layer that computes a patch's
// body (stalewrites.Guard does), so that the body carries the reset.
func Writes(c client.WithWatch, kinds ...schema.GroupKind) client.WithWatch {
	set := make(map[schema.GroupKind]bool, len(kinds))
	for _, k := range kinds {
		set[k] = true
	}
	untrack := func(c client.WithWatch, obj client.Object) {
		if gvk, err := c.GroupVersionKindFor(obj); err == nil && set[gvk.GroupKind()] {
			// One empty entry clears the record. A new slice each time: a
			// response decoded into obj may reuse it.
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{{}})
		}
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			untrack(c, obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			// A merge patch made from obj (client.MergeFrom) carries what
			// obj has and its base does not; the base, from the cache, has
			// no managedFields. An apply must not name managedFields, and
			// a raw patch's body is fixed.
			if patch.Type() == types.MergePatchType {
				untrack(c, obj)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
}
