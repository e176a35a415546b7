package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of a scheduling attempt (label "result").
const (
	resultScheduled     = "scheduled"
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

var (
	attemptsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_scheduler_attempts_total",
		Help: "Scheduling attempts of bindings by result: scheduled, unschedulable (no cluster fits) or error (the attempt or its write failed).",
	}, []string{"result"})
	latencySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "atoll_scheduler_latency_seconds",
		Help:    "Duration of a scheduling attempt of one binding, from reading the clusters to the last write.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 100µs … 13s
	})
	handoffsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_scheduler_status_handoffs_total",
		Help: "Statuses of new placements and of new binding generations handed to the executor's write (handed), and those the scheduler wrote itself because the executor had not in time (timed-out).",
	}, []string{"outcome"})
)

func init() {
	for _, r := range []string{resultScheduled, resultUnschedulable, resultError} {
		attemptsTotal.WithLabelValues(r)
	}
	for _, o := range []string{"handed", "timed-out"} {
		handoffsTotal.WithLabelValues(o)
	}
	ctrlmetrics.Registry.MustRegister(attemptsTotal, latencySeconds, handoffsTotal)
}
