package eviction

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Outcomes of a wanted eviction (label "result").
const (
	ResultEvicted     = "evicted"
	ResultBlocked     = "blocked"
	ResultRateLimited = "rate_limited"
)

var (
	evictionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_failover_evictions_total",
		Help: "Evictions failover wanted, by producer (TaintManager, ApplicationFailover) and result: evicted, blocked (held back: no other cluster can take the replicas, or a large-scale disruption) or rate_limited (delayed by the fleet-wide rate).",
	}, []string{"producer", "result"})
	restoreSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "atoll_failover_restore_seconds",
		Help:    "Time from a failure (a cluster turning not Ready, or the eviction of an unhealthy application) to the binding running healthily on its new clusters, by producer.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14), // 1s … 2.3h
	}, []string{"producer"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(evictionsTotal, restoreSeconds)
}

// CountEviction counts one wanted eviction by producer and result.
func CountEviction(producer, result string) {
	evictionsTotal.WithLabelValues(producer, result).Inc()
}

// ObserveRestore records one failure-to-restored duration.
func ObserveRestore(producer string, d time.Duration) {
	restoreSeconds.WithLabelValues(producer).Observe(d.Seconds())
}
