package framework

import (
	"net"
	"strconv"
	"testing"
)

func TestFreeLoopbackAddr(t *testing.T) {
	low, inRange := ephemeralLow()
	for range 20 {
		addr := FreeLoopbackAddr(t)
		host, portText, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" {
			t.Fatalf("FreeLoopbackAddr = %q: not a loopback host:port (%v)", addr, err)
		}
		port, _ := strconv.Atoi(portText)
		if inRange && (port < lowestPort || port >= low) {
			t.Errorf("port %d outside [%d, %d): the kernel may hand it to another process", port, lowestPort, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s is not free: %v", addr, err)
		}
		_ = l.Close()
	}
}
