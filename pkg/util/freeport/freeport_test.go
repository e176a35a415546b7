package freeport

import (
	"net"
	"testing"
)

func TestListen(t *testing.T) {
	high, below := pickBelow()
	for range 20 {
		l, err := Listen("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if below && (port < lowest || port >= high) {
			t.Errorf("port %d outside [%d, %d): the kernel may hand it to another process", port, lowest, high)
		}
	}
}

func TestAddr(t *testing.T) {
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s is not free: %v", addr, err)
	}
	_ = l.Close()
}
