// Package dependencies tests, end to end, that a workload's dependencies
// follow it (propagateDeps) and that atoll leaves the replica count of a
// workload scaled by an HPA in its member alone.
package dependencies

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{Members: 2}))
}
