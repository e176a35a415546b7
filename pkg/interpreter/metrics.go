package interpreter

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	scriptCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_interpreter_script_calls_total",
		Help: "Calls of ResourceInterpreterCustomization scripts, by operation and result (success, error).",
	}, []string{"operation", "result"})
	scriptSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "atoll_interpreter_script_duration_seconds",
		Help:    "Time per script call (a fresh Lua state each), by operation.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16), // 50µs … 1.6s
	}, []string{"operation"})
)

func init() { ctrlmetrics.Registry.MustRegister(scriptCalls, scriptSeconds) }
