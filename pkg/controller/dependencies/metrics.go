package dependencies

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics, registered with controller-runtime's registry. Queue depth,
// reconcile latency and errors are the standard workqueue_* and
// controller_runtime_reconcile_* series with controller="dependencies".
var (
	attachedWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_dependencies_attached_bindings_written_total",
		Help: "Writes of attached ResourceBindings by the dependencies controller, by op (create, update, delete).",
	}, []string{"op"})
	templateReads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "atoll_dependencies_template_reads_total",
		Help: "Workload templates read to find their dependencies (once per template version).",
	})
)

func init() {
	metrics.Registry.MustRegister(attachedWritten, templateReads)
}
