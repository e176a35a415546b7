// Package safety tests what atoll promises never to do to member clusters
// (DESIGN.md section 9): releasing a template does not withdraw it, objects
// atoll does not own are neither adopted nor deleted, taken-over objects
// are handed back, volumes outlive the workloads that mount them, and no
// override can change an object's identity. Every test drives atoll as a
// user does, through kubectl and the atoll CLI, on two simulated members.
package safety

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		// Fast health checking, so a stopped member is seen within seconds.
		// A short sweep, so copies no status records are found quickly.
		Args: append(framework.FastClusterHealthArgs(), "--member-sweep-period=10s"),
	}))
}
