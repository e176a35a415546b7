// Package interpreter tests, end to end, that atoll propagates kinds it does
// not know natively as a ResourceInterpreterCustomization written for
// Karmada describes them, that a failing script is reported on the binding
// and contained, and that native kinds get their per-cluster shares (a
// Divided Job's parallelism). Every test drives atoll through kubectl on two
// simulated members.
package interpreter

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		Args:    framework.FastClusterHealthArgs(),
	}))
}
