package shard

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// heldGauge is 1 for each shard this process holds.
	heldGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "atoll_shard_held",
		Help: "1 for each shard this controller-manager holds, 0 for the others (only with --shards > 1).",
	}, []string{"shard"})
	// transitions counts shards taken, handed back and lost.
	transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_shard_transitions_total",
		Help: "Shards this controller-manager took (taken), handed back to balance the replicas (handed_back) or lost (lost: the process then exits).",
	}, []string{"event"})
)

func init() { ctrlmetrics.Registry.MustRegister(heldGauge, transitions) }

func setHeld(s int, held bool) {
	v := 0.0
	if held {
		v = 1
	}
	heldGauge.WithLabelValues(strconv.Itoa(s)).Set(v)
}
