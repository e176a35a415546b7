package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// startProxy runs a proxy in front of target until the test ends.
func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := New(l, target)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return p
}

// startEcho runs a TCP server that echoes every line back.
func startEcho(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

func startHTTP(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// echo sends line over c and returns what comes back within timeout.
func echo(c net.Conn, r *bufio.Reader, line string, timeout time.Duration) (string, error) {
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := r.ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func get(t *testing.T, client *http.Client, url string) (string, error) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestForwardPartitionHeal(t *testing.T) {
	p := startProxy(t, startEcho(t))
	addr := p.Addr().String()

	// Forwarding works.
	before, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = before.Close() }()
	beforeR := bufio.NewReader(before)
	if got, err := echo(before, beforeR, "hello", 5*time.Second); err != nil || got != "hello" {
		t.Fatalf("echo before partition = %q, %v; want hello", got, err)
	}

	p.Set(true, 0)

	// The connection forwarded before the partition is cut: reading ends
	// with an error other than our deadline.
	if err := before.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := beforeR.ReadString('\n'); err == nil || isTimeout(err) {
		t.Errorf("read on a connection forwarded before the partition: err = %v, want it closed", err)
	}

	// A new connection is accepted, not refused, but nothing comes back: the
	// client times out.
	during, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial during partition: %v, want the connection accepted", err)
	}
	defer func() { _ = during.Close() }()
	duringR := bufio.NewReader(during)
	if got, err := echo(during, duringR, "lost", 500*time.Millisecond); !isTimeout(err) {
		t.Errorf("echo during partition = %q, %v; want a timeout", got, err)
	}

	p.Set(false, 0)

	// Healing closes the blackholed connection...
	if err := during.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := duringR.ReadString('\n'); err == nil || isTimeout(err) {
		t.Errorf("read on a blackholed connection after heal: err = %v, want it closed", err)
	}
	// ...and forwards new connections again.
	after, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = after.Close() }()
	if got, err := echo(after, bufio.NewReader(after), "again", 5*time.Second); err != nil || got != "again" {
		t.Errorf("echo after heal = %q, %v; want again", got, err)
	}
}

func TestHTTPThroughPartition(t *testing.T) {
	p := startProxy(t, startHTTP(t))
	url := "http://" + p.Addr().String() + "/"
	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{}}

	if got, err := get(t, client, url); err != nil || got != "ok" {
		t.Fatalf("GET before partition = %q, %v; want ok", got, err)
	}
	p.Set(true, 0)
	_, err := get(t, client, url)
	if !isTimeout(err) {
		t.Errorf("GET during partition: err = %v, want a timeout", err)
	}
	if err != nil && strings.Contains(err.Error(), "connection refused") {
		t.Errorf("GET during partition was refused (%v), want a timeout", err)
	}
	p.Set(false, 0)
	if got, err := get(t, client, url); err != nil || got != "ok" {
		t.Errorf("GET after heal = %q, %v; want ok", got, err)
	}
}

func TestLatency(t *testing.T) {
	const latency = 300 * time.Millisecond
	p := startProxy(t, startEcho(t))
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	r := bufio.NewReader(c)

	p.Set(false, latency)
	start := time.Now()
	if got, err := echo(c, r, "slow", 10*time.Second); err != nil || got != "slow" {
		t.Fatalf("echo with latency = %q, %v; want slow", got, err)
	}
	if took := time.Since(start); took < latency {
		t.Errorf("echo with latency %v took %v, want at least the latency", latency, took)
	}

	// Removing the latency keeps the connection working.
	p.Set(false, 0)
	if got, err := echo(c, r, "fast", 10*time.Second); err != nil || got != "fast" {
		t.Errorf("echo after removing latency = %q, %v; want fast", got, err)
	}
}

func TestHalfClose(t *testing.T) {
	p := startProxy(t, startEcho(t))
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, "bye"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Errorf("read after half-close = %q, %v; want bye and EOF", got, err)
	}
}

func TestApply(t *testing.T) {
	cases := map[string]struct {
		fault           simdir.Fault
		wantPartitioned bool
		wantLatency     time.Duration
		wantErr         bool
	}{
		"none":        {},
		"partitioned": {fault: simdir.Fault{Partitioned: true}, wantPartitioned: true},
		"slow":        {fault: simdir.Fault{Latency: "750ms"}, wantLatency: 750 * time.Millisecond},
		"stopped is not the proxy's business": {
			fault: simdir.Fault{Stopped: true, Latency: "1s"}, wantLatency: time.Second,
		},
		"bad latency": {fault: simdir.Fault{Latency: "soon"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := New(nil, "")
			err := p.Apply(tc.fault)
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Fatalf("Apply error = %v, want error %v", err, tc.wantErr)
			}
			partitioned, latency := p.State()
			if diff := cmp.Diff(tc.wantPartitioned, partitioned); diff != "" {
				t.Errorf("partitioned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLatency, latency); diff != "" {
				t.Errorf("latency (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunClosesConnectionsOnShutdown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := New(l, startEcho(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	r := bufio.NewReader(c)
	if got, err := echo(c, r, "hi", 5*time.Second); err != nil || got != "hi" {
		t.Fatalf("echo = %q, %v; want hi", got, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err == nil || isTimeout(err) || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read after shutdown: err = %v, want the connection closed", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr().String(), time.Second); err == nil {
		t.Errorf("dial after shutdown succeeded, want the listener closed")
	}
}
