// Package scheduler tests the scheduler controller against a real API
// server: `atoll up` with no members and no controllers, and the scheduler
// run in this test process, so nothing else writes bindings. Clusters and
// bindings are created by hand.
package scheduler

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var cp *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &cp, framework.Options{Args: []string{"--controllers="}}))
}
