// Package integration tests atoll's control plane on real API servers: each
// test runs `atoll up` as a user would and talks to it through the
// kubeconfig it writes.
package integration

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

// shared is one control plane for the tests that only read and write
// objects; tests that restart or lock a data dir start their own.
var shared *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &shared, framework.Options{}))
}
