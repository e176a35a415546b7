package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// cacheWait bounds how long a placement of a workload affinity group waits
// for the cache to show it before the next placement of a group is made.
const cacheWait = 5 * time.Second

// workloadGroups reads where the other workloads of obj's affinity groups
// run (nil: obj has none, or is a ClusterResourceBinding: groups are
// namespaced). It uses the cache's WorkloadGroup index and falls back to
// the namespace's bindings when the reader has no such index.
func workloadGroups(ctx context.Context, c client.Reader, obj client.Object, spec *workv1alpha2.ResourceBindingSpec) (*framework.WorkloadGroups, error) {
	g := spec.WorkloadAffinityGroups
	if c == nil || g == nil || obj.GetNamespace() == "" || (g.AffinityGroup == "" && g.AntiAffinityGroup == "") {
		return nil, nil
	}
	out := &framework.WorkloadGroups{AffinityGroup: g.AffinityGroup, AntiAffinityGroup: g.AntiAffinityGroup}
	peers := func(key string, keep func(*workv1alpha2.ResourceBindingSpec) bool) ([]*workv1alpha2.ResourceBinding, error) {
		var list workv1alpha2.ResourceBindingList
		err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{indexer.WorkloadGroup: key}, client.UnsafeDisableDeepCopy)
		if err != nil {
			// No index (a reader other than the manager's cache): filter
			// the namespace's bindings here.
			if err = c.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
				return nil, fmt.Errorf("listing the bindings of workload group %s: %w", key, err)
			}
		}
		var out []*workv1alpha2.ResourceBinding
		for i := range list.Items {
			b := &list.Items[i]
			if b.Name != obj.GetName() && len(b.Spec.Clusters) > 0 && b.Spec.WorkloadAffinityGroups != nil && keep(&b.Spec) {
				out = append(out, b)
			}
		}
		return out, nil
	}
	if g.AffinityGroup != "" {
		bs, err := peers(indexer.AffinityKey(g.AffinityGroup), func(s *workv1alpha2.ResourceBindingSpec) bool {
			return s.WorkloadAffinityGroups.AffinityGroup == g.AffinityGroup
		})
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			out.Affinity = append(out.Affinity, clusterSet(b.Spec.Clusters))
		}
	}
	if g.AntiAffinityGroup != "" {
		bs, err := peers(indexer.AntiAffinityKey(g.AntiAffinityGroup), func(s *workv1alpha2.ResourceBindingSpec) bool {
			return s.WorkloadAffinityGroups.AntiAffinityGroup == g.AntiAffinityGroup
		})
		if err != nil {
			return nil, err
		}
		out.AntiAffinity = map[string]bool{}
		for _, b := range bs {
			for _, tc := range b.Spec.Clusters {
				out.AntiAffinity[tc.Name] = true
			}
		}
	}
	return out, nil
}

func clusterSet(targets []workv1alpha2.TargetCluster) map[string]bool {
	m := make(map[string]bool, len(targets))
	for _, t := range targets {
		m[t.Name] = true
	}
	return m
}

// groupSerializer makes the placements of bindings with workload groups
// one at a time, each seen by the cache before the next is computed, so
// that two workloads of an anti-affinity group scheduled at once cannot
// both take the same cluster (nor two of an affinity group, as each
// other's first, pick different ones). Bindings without groups do not
// wait for it. Within one process only: with several shards, two shards'
// placements can still cross (docs/sharding.md).
type groupSerializer struct{ mu sync.Mutex }

// lock takes the serializer for a binding with workload groups and
// returns its release; a no-op for others.
func (g *groupSerializer) lock(spec *workv1alpha2.ResourceBindingSpec) func() {
	if g == nil || spec.WorkloadAffinityGroups == nil {
		return func() {}
	}
	g.mu.Lock()
	return g.mu.Unlock
}

// awaitCache waits until the cache holds obj at its resourceVersion (or
// later), so the next placement of a group sees this one.
func awaitCache(ctx context.Context, c client.Reader, obj client.Object) {
	want := obj.GetResourceVersion()
	cached := obj.DeepCopyObject().(client.Object)
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, cacheWait, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cached); err != nil {
			return false, nil
		}
		cmp, err := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), want)
		return err == nil && cmp >= 0, nil
	})
	if err != nil {
		klog.FromContext(ctx).V(1).Info("Cache did not show a workload group placement in time", "binding", klog.KObj(obj), "wait", cacheWait)
	}
}

// peerHandler reschedules the other workloads of a binding's groups when
// the binding is deleted, placed elsewhere or changes groups (a new
// binding has no clusters yet, so it changes nothing for the others): a
// workload kept off a cluster by anti-affinity may fit once the other one
// is gone, and an affinity group's later workloads follow its placement.
func (r *reconciler) peerHandler() handler.EventHandler {
	type q = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q q, self client.Object, groups ...*workv1alpha2.WorkloadAffinityGroups) {
		seen := map[string]bool{}
		for _, g := range groups {
			for _, key := range indexer.WorkloadGroupKeys(g) {
				if seen[key] {
					continue
				}
				seen[key] = true
				var list workv1alpha2.ResourceBindingList
				if err := r.client.List(ctx, &list, client.InNamespace(self.GetNamespace()), client.MatchingFields{indexer.WorkloadGroup: key}, client.UnsafeDisableDeepCopy); err != nil {
					klog.FromContext(ctx).Error(err, "Listing a workload group", "group", key)
					continue
				}
				for i := range list.Items {
					if list.Items[i].Name != self.GetName() {
						q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
					}
				}
			}
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q q) {
			o, ok1 := e.ObjectOld.(*workv1alpha2.ResourceBinding)
			n, ok2 := e.ObjectNew.(*workv1alpha2.ResourceBinding)
			if !ok1 || !ok2 || (o.Spec.WorkloadAffinityGroups == nil && n.Spec.WorkloadAffinityGroups == nil) {
				return
			}
			if sameTargets(o.Spec.Clusters, n.Spec.Clusters) && semantic.Equal(o.Spec.WorkloadAffinityGroups, n.Spec.WorkloadAffinityGroups) {
				return
			}
			enqueue(ctx, q, n, o.Spec.WorkloadAffinityGroups, n.Spec.WorkloadAffinityGroups)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q q) {
			if b, ok := e.Object.(*workv1alpha2.ResourceBinding); ok {
				enqueue(ctx, q, b, b.Spec.WorkloadAffinityGroups)
			}
		},
	}
}
