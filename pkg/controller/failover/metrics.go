package failover

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
)

var pendingDesc = prometheus.NewDesc("atoll_failover_eviction_tasks_pending",
	"Graceful eviction tasks in bindings' spec.gracefulEvictionTasks, by producer (TaintManager, ApplicationFailover).",
	[]string{"producer"}, nil)

// pendingTasks counts graceful eviction tasks by producer as the binding
// informers see bindings come, change and go, so that a scrape costs the
// same however many bindings there are. It used to list every binding from
// the cache on each scrape: 68 MB copied and a full pass per scrape at
// 100,000 bindings, which made a settled controller-manager collect
// garbage every minute under a 10 s scrape (design 0013, decision 30).
type pendingTasks struct {
	mu sync.Mutex
	// byBinding holds only bindings with tasks: store key →
	// producer → tasks.
	byBinding map[string]map[string]int
	total     map[string]int
}

// registered is the pendingTasks on the metrics registry: the last manager
// set up is counted (tests run several in one process; a process runs one).
var registered struct {
	sync.Mutex
	pending *pendingTasks
}

// registerPending counts mgr's bindings' eviction tasks for the metrics
// registry. The informers' handlers are added before the cache starts.
func registerPending(ctx context.Context, mgr ctrl.Manager) error {
	p := newPendingTasks()
	for _, k := range bindingkind.Both {
		inf, err := mgr.GetCache().GetInformer(ctx, k.NewObject())
		if err != nil {
			return fmt.Errorf("failover: informer for %s: %w", k.Kind(), err)
		}
		if _, err := inf.AddEventHandler(p.handler()); err != nil {
			return fmt.Errorf("failover: eviction task counts for %s: %w", k.Kind(), err)
		}
	}
	registered.Lock()
	defer registered.Unlock()
	if registered.pending != nil {
		ctrlmetrics.Registry.Unregister(registered.pending)
	}
	if err := ctrlmetrics.Registry.Register(p); err != nil {
		return fmt.Errorf("failover: registering %s: %w", "atoll_failover_eviction_tasks_pending", err)
	}
	registered.pending = p
	return nil
}

func newPendingTasks() *pendingTasks {
	return &pendingTasks{byBinding: map[string]map[string]int{}, total: map[string]int{}}
}

func (p *pendingTasks) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

func (p *pendingTasks) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	counts := map[string]int{workv1alpha2.EvictionProducerTaintManager: 0, workv1alpha2.EvictionProducerApplicationFailover: 0}
	for producer, n := range p.total {
		counts[producer] += n
	}
	p.mu.Unlock()
	for producer, n := range counts {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n), producer)
	}
}

// handler keeps the counts of its informer's bindings. Store keys tell
// the two kinds apart (namespace/name, name).
func (p *pendingTasks) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    p.set,
		UpdateFunc: func(_, obj any) { p.set(obj) },
		DeleteFunc: func(obj any) {
			if key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				p.replace(key, nil)
			}
		},
	}
}

func (p *pendingTasks) set(obj any) {
	b, ok := obj.(client.Object)
	if !ok {
		return
	}
	key, err := toolscache.MetaNamespaceKeyFunc(b)
	if err != nil {
		return
	}
	var tasks map[string]int
	for _, t := range bindingkind.Spec(b).GracefulEvictionTasks {
		if tasks == nil {
			tasks = map[string]int{}
		}
		tasks[t.Producer]++
	}
	p.replace(key, tasks)
}

// replace records tasks (nil: none) as the binding's, in place of what it
// had.
func (p *pendingTasks) replace(key string, tasks map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for producer, n := range p.byBinding[key] {
		p.total[producer] -= n
	}
	if len(tasks) == 0 {
		delete(p.byBinding, key)
		return
	}
	p.byBinding[key] = tasks
	for producer, n := range tasks {
		p.total[producer] += n
	}
}
