// Package overrides tests OverridePolicies, ClusterOverridePolicies and
// conflict resolution end to end: `atoll up` with two simulated members
// joined automatically and all controllers running.
package overrides

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{Members: 2}))
}
