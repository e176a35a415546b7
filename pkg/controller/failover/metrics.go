package failover

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
)

var pendingDesc = prometheus.NewDesc("atoll_failover_eviction_tasks_pending",
	"Graceful eviction tasks in bindings' spec.gracefulEvictionTasks, by producer (TaintManager, ApplicationFailover).",
	[]string{"producer"}, nil)

// pendingCollector counts eviction tasks from the informer cache when
// scraped, so the figure never drifts from the bindings.
type pendingCollector struct {
	client client.Client
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]float64{}
	for _, k := range bindingkind.Both {
		list := k.NewList()
		if err := c.client.List(context.Background(), list, client.UnsafeDisableDeepCopy); err != nil {
			continue // the cache is not started yet
		}
		for _, spec := range k.Specs(list) {
			for _, t := range spec.GracefulEvictionTasks {
				counts[t.Producer]++
			}
		}
	}
	for _, p := range []string{workv1alpha2.EvictionProducerTaintManager, workv1alpha2.EvictionProducerApplicationFailover} {
		counts[p] += 0
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, n, p)
	}
}
