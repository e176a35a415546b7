package detector

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics, registered with controller-runtime's registry (served on the
// manager's metrics endpoint). The work queue's depth, adds, latency and
// retries are the standard workqueue_* series with name="detector".
var (
	bindingsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_detector_bindings_written_total",
		Help: "Writes of ResourceBindings and ClusterResourceBindings by the detector, by op (create, update, delete).",
	}, []string{"op"})
	claimsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_detector_claims_written_total",
		Help: "Patches of claim labels and annotations on resource templates, by op (claim, unclaim).",
	}, []string{"op"})
	policiesLabelled = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "atoll_detector_policy_ids_written_total",
		Help: "Permanent-id labels the detector added to propagation policies.",
	})
	reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_detector_reconciles_total",
		Help: "Reconciles by object kind (template, policy) and result (success, error).",
	}, []string{"kind", "result"})
	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "atoll_detector_reconcile_duration_seconds",
		Help:    "Time per reconcile, by object kind (template, policy).",
		Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"kind"})
	activeWorkers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "atoll_detector_active_workers",
		Help: "Workers currently reconciling.",
	})
	maxWorkers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "atoll_detector_workers",
		Help: "Templates the detector reconciles at once at most (--concurrent-resource-template-syncs), as controller_runtime_max_concurrent_reconciles for the other controllers.",
	})
	watchedResources = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "atoll_detector_watched_resources",
		Help: "Resources (GVRs) whose templates the detector watches; 0 until the first discovery has synced.",
	})
)

func init() {
	metrics.Registry.MustRegister(bindingsWritten, claimsWritten, policiesLabelled, reconciles,
		reconcileDuration, activeWorkers, maxWorkers, watchedResources)
}
