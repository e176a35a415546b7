// Package clusters tests cluster registration and health end to end:
// `atoll join/unjoin/get clusters` against an `atoll up` with two simulated
// members, and the cluster controller (run in this test process with short
// periods) probing them through their fault proxies while faults are
// injected.
package clusters

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

// world is one `atoll up` with two members and no controllers of its own:
// the tests run the cluster controller in process.
var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		// No controllers and no automatic join: the test joins by hand.
		Args: []string{"--controllers=", "--join-members=false"},
	}))
}
