package manager

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsServer(t *testing.T) {
	t.Run("0 disables it", func(t *testing.T) {
		s, err := metricsServer("0")
		if s != nil || err != nil {
			t.Fatalf("metricsServer(0) = %v, %v; want nil, nil", s, err)
		}
	})
	t.Run("a taken port is an error naming the flag, before anything starts", func(t *testing.T) {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = taken.Close() }()
		s, err := metricsServer(taken.Addr().String())
		if err == nil {
			_ = s.Listener.Close()
			t.Fatal("no error for a port another listener holds")
		}
		if !strings.Contains(err.Error(), "--metrics-bind-address") || !strings.Contains(err.Error(), taken.Addr().String()) {
			t.Errorf("error %q names neither the flag nor the address", err)
		}
	})
	t.Run("port 0 serves the registry at /metrics on the port it got", func(t *testing.T) {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "atoll_test_metrics_server_total", Help: "A test counter."})
		crmetrics.Registry.MustRegister(c)
		defer crmetrics.Registry.Unregister(c)
		c.Add(3)
		s, err := metricsServer("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Start(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server stopped with %v", err)
			}
		}()
		resp, err := http.Get("http://" + s.Listener.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "atoll_test_metrics_server_total 3") {
			t.Errorf("GET /metrics = %d:\n%s", resp.StatusCode, body)
		}
	})
}
