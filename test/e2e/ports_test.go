package e2e

import (
	"net"
	"strings"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

// TestTakenMetricsPortFailsTheStart: when another process holds the port
// of --metrics-bind-address, `atoll up` exits before it says ready, with
// an error naming the flag. (It used to say ready, then lose its API
// server: the controllers bound the port only after the ready line, failed,
// and the control plane was restarted over and over.)
func TestTakenMetricsPortFailsTheStart(t *testing.T) {
	t.Parallel()
	// The kernel's choice, held from the start: a free port looked up
	// first and bound after could be taken by a test running in parallel
	// in between (it was, once, in a CI run).
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	_, err = framework.TryStartControlPlane(t, framework.Options{Members: 0,
		Args: []string{"--metrics-bind-address=" + taken.Addr().String()}})
	if err == nil {
		t.Fatal("atoll up said ready with its metrics port taken")
	}
	if !strings.Contains(err.Error(), "--metrics-bind-address") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("the failed start does not say which flag's address is in use:\n%v", err)
	}
}
