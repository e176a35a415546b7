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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	detector "github.com/atoll-dev/atoll/pkg/controller/detector"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var cp *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &cp, framework.Options{Args: []string{"--controllers="}}))
}

// startDetector runs the detector (1 s rediscovery) in its own manager until
// the returned stop is called or the test ends. It returns once the
// detector has synced its informers.
func startDetector(t *testing.T) (stop func()) {
	t.Helper()
	m := framework.StartManager(t, cp.RESTConfig(t), func(ctx context.Context, mgr ctrl.Manager) error {
		if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		return detector.Setup(ctx, mgr, detector.Options{RediscoveryPeriod: time.Second})
	})
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		// Let queued work finish, so the next detector starts from a
		// quiet world and the shared queue metrics read zero.
		waitIdle(t)
		m.Stop()
	}
	t.Cleanup(stop)
	framework.Eventually(t, time.Minute, "the detector to sync", func() (bool, string) {
		select {
		case <-m.Exited():
			t.Fatalf("manager exited: %v", m.Err())
		default:
		}
		n := framework.MetricValue(t, "atoll_detector_watched_resources", nil)
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
				framework.MetricValue(t, "workqueue_depth", map[string]string{"name": detector.Name}),
				framework.MetricValue(t, "atoll_detector_active_workers", nil))
		}
		depth := framework.MetricValue(t, "workqueue_depth", map[string]string{"name": detector.Name})
		active := framework.MetricValue(t, "atoll_detector_active_workers", nil)
		if depth == 0 && active == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writes is the number of binding writes the detector made so far.
func writes(t *testing.T) float64 {
	return framework.MetricValue(t, "atoll_detector_bindings_written_total", nil) +
		framework.MetricValue(t, "atoll_detector_claims_written_total", nil)
}

// namespace creates a namespace for one test (left behind: the control
// plane has no namespace controller to finish deleting it).
func namespace(t *testing.T, c client.Client) string {
	t.Helper()
	name := "det-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	if err := c.Create(framework.Context(t, time.Minute), utiltesting.MakeNamespace(name).Obj()); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
