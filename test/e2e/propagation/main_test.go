// Package propagation tests propagation end to end: `atoll up` with two
// simulated members joined automatically and all controllers running;
// templates and policies go into the control plane, objects come out in
// the members, status comes back.
package propagation

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		// Fast health checking so member failures show within seconds.
		Args: framework.FastClusterHealthArgs(),
	}))
}
