package framework

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeLoopbackAddr returns a loopback host:port nothing listens on, for a
// flag such as --metrics-bind-address that a process started later binds.
//
// The port is picked below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range). The kernel hands ephemeral ports to
// every listener on port 0 (the API servers and etcds of tests running in
// parallel) and to every outgoing connection, so a port reserved there and
// released could be taken before the process binds it; below the range
// only another explicit choice can take it, and the choice is random.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreeAddr is FreeLoopbackAddr for code with no test at hand (TestMain).
func FreeAddr() (string, error) {
	if low, ok := ephemeralLow(); ok {
		for range 100 {
			port := lowestPort + rand.IntN(low-lowestPort)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue // in use
			}
			_ = l.Close()
			return l.Addr().String(), nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// lowestPort is the lowest port FreeLoopbackAddr picks: well above the
// ports services are registered on.
const lowestPort = 10000

// ephemeralLow is the first port of the kernel's ephemeral range, when it
// leaves at least 1,000 ports above lowestPort to pick from.
func ephemeralLow() (int, bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low < lowestPort+1000 {
		return 0, false
	}
	return low, true
}
