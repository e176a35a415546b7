// Package freeport binds servers whose port is remembered across restarts
// (the API servers, etcd and the fault proxies of `atoll up`, recorded in
// their data dirs) to ports the kernel never hands out by itself.
//
// A port from the kernel's ephemeral range (net.ipv4.ip_local_port_range)
// is what every listener on port 0 and every outgoing connection draws
// from. Such a port, remembered and free while its server restarts, can be
// taken by any process in that window, and the server then fails on it.
// Below the range only an explicit choice takes a port, so a random free
// one there is kept across restarts in practice. The NodePort range
// (30000–32767) is left alone too.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

const (
	// lowest is the lowest port picked: well above registered services.
	lowest = 10000
	// nodePorts is the first port of Kubernetes' default NodePort range.
	nodePorts = 30000
	// tries bounds the random picks before the kernel picks instead.
	tries = 100
)

// Listen binds port on host when it is not 0 and free (a remembered
// port), else a free port below the ephemeral range when the kernel's
// range leaves room for it (else wherever the kernel chooses).
func Listen(host string, port int) (net.Listener, error) {
	if port != 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			return l, nil
		}
	}
	if high, ok := pickBelow(); ok {
		for range tries {
			port := lowest + rand.IntN(high-lowest)
			if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", net.JoinHostPort(host, "0"))
}

// Addr returns a loopback host:port that is free now, for a server that
// a process started later binds (tests' --metrics-bind-address).
func Addr() (string, error) {
	l, err := Listen("127.0.0.1", 0)
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// pickBelow is the end (exclusive) of the ports Listen picks from: the
// ephemeral range's first port or the NodePort range's, whichever is
// lower; false when that leaves fewer than 1,000 ports or the range
// cannot be read (not Linux).
func pickBelow() (int, bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0, false
	}
	high := min(low, nodePorts)
	return high, high-lowest >= 1000
}
