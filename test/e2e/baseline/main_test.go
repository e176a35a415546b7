// Package baseline tests ClusterBaseline delivery against real API servers:
// dependency order on every cluster, a cluster joined later gated by the
// baseline taint until its baseline is ready, a failing component blocking
// only its dependents, refusal of cycles, ordered upgrades and withdrawal,
// and a custom resource waiting for its API.
package baseline

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	// Members join by hand: member3 joins after the baseline exists.
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{Members: 3, Args: []string{"--join-members=false"}}))
}
