package framework

import (
	"testing"

	"github.com/atoll-dev/atoll/pkg/util/freeport"
)

// FreeLoopbackAddr returns a loopback host:port nothing listens on, for a
// flag such as --metrics-bind-address that a process started later binds.
// The port is below the kernel's ephemeral range (pkg/util/freeport), from
// which parallel tests' API servers, etcds and outgoing connections take
// theirs: one reserved there and released could be taken before the
// process binds it.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreeAddr is FreeLoopbackAddr for code with no test at hand (TestMain).
func FreeAddr() (string, error) { return freeport.Addr() }
