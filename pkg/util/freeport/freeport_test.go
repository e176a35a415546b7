package freeport

import (
	"net"
	"testing"
)

func TestListen(t *testing.T) {
	high, below := pickBelow()
	for range 20 {
		l, err := Listen("127.0.0.1", 0)
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

func TestListenRemembered(t *testing.T) {
	l, err := Listen("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	taken, err := Listen("127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	if got := taken.Addr().(*net.TCPAddr).Port; got == port {
		t.Errorf("bound the taken port %d", port)
	}
	_ = taken.Close()
	_ = l.Close()
	again, err := Listen("127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Close() }()
	if got := again.Addr().(*net.TCPAddr).Port; got != port {
		t.Errorf("bound %d, want the remembered port %d, which is free", got, port)
	}
}
