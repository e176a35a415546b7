// Package failover tests cluster and application failover end to end:
// `atoll up` with three simulated members, the world's load on, and real
// member HPAs; members are stopped and partitioned with `atoll sim fault`.
package failover

import (
	"fmt"
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var (
	world *framework.ControlPlane
	// metricsAddr serves the controller-manager's Prometheus metrics.
	metricsAddr string
)

func TestMain(m *testing.M) {
	addr, err := framework.FreeAddr()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	metricsAddr = addr
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 3,
		// Fast health checking so failures show within seconds.
		Args: append(framework.FastClusterHealthArgs(), "--metrics-bind-address="+metricsAddr),
	}))
}
