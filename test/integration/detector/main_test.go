// Package detector tests the detector (pkg/controller/detector) against a
// real control plane: `atoll up` runs with no controllers, and each test
// runs the detector in an in-process controller-runtime manager, so it can
// also stop and restart it and read its metrics.
package detector

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	detector "github.com/atoll-dev/atoll/pkg/controller/detector"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/test/framework"
)

var cp *framework.ControlPlane

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.RunWithControlPlane(m, &cp, framework.Options{Args: []string{"--controllers="}}))
}

// startDetector runs the detector (1 s rediscovery) in its own manager until
// the returned stop is called or the test ends. It returns once the
// detector has synced its informers.
func startDetector(t *testing.T) (stop func()) {
	t.Helper()
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cp.RESTConfig(t), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := detector.Setup(ctx, mgr, detector.Options{RediscoveryPeriod: time.Second}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		// Let queued work finish, so the next detector starts from a
		// quiet world and the shared queue metrics read zero.
		waitIdle(t)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("manager did not stop within 30s")
		}
	}
	t.Cleanup(stop)
	framework.Eventually(t, time.Minute, "the detector to sync", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("manager exited: %v", err)
		default:
		}
		n := metricValue(t, "atoll_detector_watched_resources", nil)
		return n > 0, fmt.Sprintf("watched resources: %v", n)
	})
	return stop
}

// waitIdle waits until the detector's queue is empty and no worker is
// busy, three polls in a row.
func waitIdle(t *testing.T) {
	t.Helper()
	quiet := 0
	deadline := time.Now().Add(30 * time.Second)
	for quiet < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("detector not idle after 30s: depth %v, active %v",
				metricValue(t, "workqueue_depth", map[string]string{"name": detector.Name}),
				metricValue(t, "atoll_detector_active_workers", nil))
		}
		depth := metricValue(t, "workqueue_depth", map[string]string{"name": detector.Name})
		active := metricValue(t, "atoll_detector_active_workers", nil)
		if depth == 0 && active == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// metricValue sums the series of a counter or gauge in controller-runtime's
// registry whose labels include labels.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			}
		}
	}
	return sum
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

// writes is the number of binding writes the detector made so far.
func writes(t *testing.T) float64 {
	return metricValue(t, "atoll_detector_bindings_written_total", nil) +
		metricValue(t, "atoll_detector_claims_written_total", nil)
}

// namespace creates a namespace for one test (left behind: the control
// plane has no namespace controller to finish deleting it).
func namespace(t *testing.T, c client.Client) string {
	t.Helper()
	name := "det-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	ns := newNamespace(name)
	if err := c.Create(framework.Context(t, time.Minute), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
