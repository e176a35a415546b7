package executor

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	sweepsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_executor_sweeps_total",
		Help: "Sweeps that made every Ready member watch every propagated resource, by binding kind.",
	}, []string{"kind"})
	handedBackTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_executor_handed_back_total",
		Help: "Member objects atoll stopped managing and left in place (taken over, preserved, or holding data), by binding kind.",
	}, []string{"kind"})
	memberApplySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "atoll_executor_member_apply_duration_seconds",
		Help:    "Duration of one server-side apply of a member object, by cluster and outcome (ok, error).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"cluster", "outcome"})
	bindingStatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_executor_binding_status_writes_total",
		Help: "Binding status changes the executor wrote (written) and those it held back to coalesce with later ones (coalesced), by binding kind.",
	}, []string{"kind", "result"})
	parkedBindings = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "atoll_executor_parked_bindings",
		Help: "Bindings waiting, outside the work queue, for a member cache's first list or a list of templates, by binding kind.",
	}, []string{"kind"})
	staleCopies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_executor_stale_member_copies_total",
		Help: "Member writes decided from a copy older than the member's (the member cache was behind) and so refused by the member " +
			"and read again, by binding kind and operation (apply, delete), and creates that met an object someone else created " +
			"since atoll looked (create), left as it was for conflict resolution.",
	}, []string{"kind", "operation"})
	clusterSyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_executor_cluster_syncs_total",
		Help: "Syncs of one binding's member object in one cluster, by binding kind and outcome: parked (the member cache was still listing), " +
			"current (compared with the rendered manifest, nothing to write; a held copy that is current included), applied, failed, " +
			"other (held with a copy not current, blocked by a conflict, or not renderable).",
	}, []string{"kind", "outcome"})
)

func init() {
	metrics.Registry.MustRegister(sweepsTotal, handedBackTotal, memberApplySeconds, bindingStatusWrites, parkedBindings, clusterSyncs, staleCopies)
}

// syncOutcomes are clusterSyncs' outcomes, as syncOutcome names them.
var syncOutcomes = []string{"parked", "failed", "applied", "current", "other"}

// syncCounters are one binding kind's clusterSyncs counters by outcome,
// resolved once: a restart counts one sync per member copy.
type syncCounters map[string]prometheus.Counter

func newSyncCounters(kind string) syncCounters {
	out := make(syncCounters, len(syncOutcomes))
	for _, o := range syncOutcomes {
		out[o] = clusterSyncs.WithLabelValues(kind, o)
	}
	return out
}

// syncOutcome names a cluster sync's result for clusterSyncs.
func syncOutcome(res clusterResult) string {
	switch {
	case res.listing != nil:
		return "parked"
	case res.err != nil:
		return "failed"
	case res.written:
		return "applied"
	case res.current && res.item.Applied:
		return "current"
	}
	return "other"
}

func applyOutcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
