// Package rebalance tests gradual moves between clusters end to end: `atoll
// up` with two simulated members, real member HPAs under the world's load,
// and the Rebalance objects and `atoll rebalance` commands that follow and
// steer the moves.
package rebalance

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

var members = []string{"member1", "member2"}

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		// A small fleet-wide budget, so that TestFleetBudgetQueues sees a
		// move wait for others (single moves here add at most 3 replicas).
		Args: append(framework.FastClusterHealthArgs(), "--rebalance-settle-window=1s", "--rebalance-max-in-flight=4"),
	}))
}
