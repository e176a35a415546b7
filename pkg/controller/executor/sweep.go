package executor

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// sweeper finds member copies that no binding status records. Every
// member gets a watch on every resource that some binding propagates: the
// watch's initial list hands each object atoll labelled to memberEvent,
// which remembers its cluster for the binding it names and enqueues that
// binding; the binding's sync then withdraws a copy its placement no longer
// wants (checking the exact ownership record first). This is what catches a
// copy applied just before a crash, before the status write that would have
// recorded it, or applied to a cluster that a later placement dropped while
// the controller was down.
type sweeper struct {
	r      *reconciler
	period time.Duration
	// delay before the first sweep, so that the start-up reconciles (which
	// start most of these watches anyway) go first.
	delay time.Duration
	// ready receives clusters that just turned Ready: their pending
	// withdrawals run at once rather than at the next sweep (a full buffer
	// only delays them to that sweep).
	ready chan string
}

func newSweeper(r *reconciler, period, delay time.Duration) *sweeper {
	return &sweeper{r: r, period: period, delay: delay, ready: make(chan string, 64)}
}

// clusterReady asks for cluster's pending withdrawals to run now.
func (s *sweeper) clusterReady(cluster string) {
	select {
	case s.ready <- cluster:
	default:
	}
}

// Start implements manager.Runnable.
func (s *sweeper) Start(ctx context.Context) error {
	first := time.After(s.delay)
	tick := time.NewTicker(s.period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case cluster := <-s.ready:
			s.exhume(ctx, cluster)
		case <-first:
			s.sweep(ctx)
		case <-tick.C:
			s.sweep(ctx)
		}
	}
}

func (s *sweeper) exhume(ctx context.Context, cluster string) {
	if err := s.r.exhume(ctx, cluster); err != nil {
		klog.FromContext(ctx).Error(err, "Pending withdrawals not done yet", "cluster", cluster)
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// leader's executor acts on what the sweep finds; sharded, every process
// sweeps for the shards it holds.
func (s *sweeper) NeedLeaderElection() bool { return !s.r.opts.Shards.Sharded() }

func (s *sweeper) sweep(ctx context.Context) {
	log := klog.FromContext(ctx).WithValues("sweep", s.r.kind.name())
	refs, err := s.r.kind.list(ctx, s.r.client, "")
	if err != nil {
		log.Error(err, "Listing bindings for the sweep")
		return
	}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, ref := range refs {
		if gv, err := schema.ParseGroupVersion(ref.resource.APIVersion); err == nil {
			kinds[gv.WithKind(ref.resource.Kind)] = true
		}
	}
	var clusters clusterv1alpha1.ClusterList
	if err := s.r.client.List(ctx, &clusters); err != nil {
		log.Error(err, "Listing clusters for the sweep")
		return
	}
	// One goroutine per member: a slow or dead member delays only itself.
	var wg sync.WaitGroup
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			continue // swept once it is Ready again
		}
		wg.Go(func() {
			s.exhume(ctx, c.Name)
			member, err := s.r.cc.Member(ctx, c.Name)
			if err != nil {
				log.V(1).Info("Member not swept", "cluster", c.Name, "err", err)
				return
			}
			for gvk := range kinds {
				mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					continue // the member does not serve the kind: nothing there
				}
				if _, err := s.r.watch(member, mapping.Resource); err != nil {
					log.V(1).Info("Member resource not swept", "cluster", c.Name, "resource", mapping.Resource, "err", err)
				}
			}
		})
	}
	wg.Wait()
	sweepsTotal.WithLabelValues(s.r.kind.name()).Inc()
}
