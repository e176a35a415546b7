package framework

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/atoll-dev/atoll/pkg/manager"
)

// Manager is a controller-runtime manager running in the test process, for
// tests that run the controller under test themselves.
type Manager struct {
	t       testing.TB
	cancel  context.CancelFunc
	exited  chan struct{}
	err     error
	stopped bool
}

// StartManager runs a controller-runtime manager with atoll's scheme
// against cfg in the test process, with setup adding the controllers under
// test to it first; setup's context ends when the manager stops. The
// manager serves no metrics or health endpoints (its metrics are in
// controller-runtime's registry: MetricValue) and is stopped when the test
// ends, unless Stop was called before.
func StartManager(t testing.TB, cfg *rest.Config, setup func(ctx context.Context, mgr ctrl.Manager) error) *Manager {
	t.Helper()
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests start a manager per test (or several) in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := setup(ctx, mgr); err != nil {
		cancel()
		t.Fatalf("setting up the manager: %v", err)
	}
	m := &Manager{t: t, cancel: cancel, exited: make(chan struct{})}
	go func() {
		m.err = mgr.Start(ctx)
		close(m.exited)
	}()
	t.Cleanup(m.Stop)
	return m
}

// Stop stops the manager and waits for it to exit; an error from it, or
// no exit within a minute, fails the test. Later calls do nothing.
func (m *Manager) Stop() {
	if m.stopped {
		return
	}
	m.stopped = true
	m.cancel()
	select {
	case <-m.exited:
		if m.err != nil {
			m.t.Errorf("manager: %v", m.err)
		}
	case <-time.After(time.Minute):
		m.t.Errorf("manager did not stop within a minute")
	}
}

// Exited is closed when the manager has exited, early or by Stop; Err says
// why.
func (m *Manager) Exited() <-chan struct{} { return m.exited }

// Err is what the manager returned once Exited is closed.
func (m *Manager) Err() error { return m.err }

// MetricValue sums the samples of counter or gauge name in
// controller-runtime's registry (what controllers run in this process
// export) whose labels include labels.
func MetricValue(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	sum, _ := metricSamples(t, name, labels)
	return sum
}

// HasMetric says whether controller-runtime's registry has a sample of name
// whose labels include labels.
func HasMetric(t testing.TB, name string, labels map[string]string) bool {
	t.Helper()
	_, n := metricSamples(t, name, labels)
	return n > 0
}

func metricSamples(t testing.TB, name string, labels map[string]string) (sum float64, n int) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			n++
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			}
		}
	}
	return sum, n
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
