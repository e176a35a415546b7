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
)

func init() { metrics.Registry.MustRegister(sweepsTotal, handedBackTotal) }
