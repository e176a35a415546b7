package manager

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metricsServer binds addr now and returns the server of the Prometheus
// metrics on it (controller-runtime's registry, at /metrics, as its own
// metrics server serves them); nil when addr is "0". An empty addr is
// ":8080", controller-runtime's default.
//
// controller-runtime's own metrics server binds only when the manager
// starts. A taken port then stops a manager that may already have
// reported ready, and `atoll up` restarts its control plane over and over.
// Bound here, a taken port fails the start with the flag's name, as the
// health and profiling listeners (bound in ctrl.NewManager) already do.
// An address with port 0 gets a free port; the server logs the one it got.
func metricsServer(addr string) (*ctrlmanager.Server, error) {
	switch addr {
	case "0":
		return nil, nil
	case "":
		addr = ":8080"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(crmetrics.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	shutdown := time.Minute
	return &ctrlmanager.Server{
		Name:            "metrics",
		Server:          &http.Server{Handler: mux, ReadHeaderTimeout: 32 * time.Second},
		Listener:        l,
		ShutdownTimeout: &shutdown,
	}, nil
}
