// Package e2e tests the whole system as a user runs it: `atoll up` with
// simulated member clusters (separate processes with real API servers,
// controllers and scheduler), the world's load and injected faults.
package e2e

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

// world is one `atoll up` with two members shared by the tests of this
// package; tests that inject faults undo them before they end.
var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		// Short windows so scale-down is observable within a test.
		Args: []string{"--member-args=--hpa-downscale-stabilization=15s,--hpa-sync-period=3s"},
	}))
}
