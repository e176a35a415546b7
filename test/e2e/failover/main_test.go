// Package failover tests cluster and application failover end to end:
// `atoll up` with three simulated members, the world's load on, and real
// member HPAs; members are stopped and partitioned with `atoll sim fault`.
package failover

import (
	"fmt"
	"net"
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
	addr, err := freeAddr()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	metricsAddr = addr
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 3,
		Args: []string{
			// Fast health checking so failures show within seconds.
			"--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s",
			"--metrics-bind-address=" + metricsAddr,
		},
	}))
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
