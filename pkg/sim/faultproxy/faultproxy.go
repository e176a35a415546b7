// Package faultproxy is the TCP proxy in front of a simulated member's API
// server through which the federation control plane reaches the member. It
// passes bytes through untouched (TLS included) and injects two faults:
//
//   - Partition: new connections are accepted but blackholed — never
//     forwarded, held open until the partition heals or the client gives up —
//     so clients see timeouts, as behind a real network partition, not
//     "connection refused". Connections forwarded before the partition are
//     cut when it starts. Healing forwards new connections again and closes
//     the blackholed ones.
//   - Latency: every chunk of bytes from the client is held for the latency
//     before it is forwarded to the API server. Chunks are delayed on a
//     delay line (each one is due latency after it arrived), so throughput is
//     not reduced. This approximates added API latency: a request on an open
//     connection is answered about latency later; a new TLS connection pays
//     it on each client flight of the handshake as well. Responses are not
//     delayed.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

const (
	// chunkSize is the largest chunk read from a connection at once.
	chunkSize = 32 << 10
	// delayLineChunks bounds the chunks in flight on one delayed connection;
	// a full delay line stops reading from the client (back pressure).
	delayLineChunks = 64
	dialTimeout     = 10 * time.Second
)

// Proxy forwards connections accepted on a listener to a target address.
type Proxy struct {
	l      net.Listener
	target string
	dialer net.Dialer

	mu          sync.Mutex
	partitioned bool
	latency     time.Duration
	forwarded   map[*pipe]struct{}
	held        map[net.Conn]struct{}
	closed      bool
	wg          sync.WaitGroup
}

// New returns a proxy that accepts on l and forwards to target (host:port).
// It serves once Run is called.
func New(l net.Listener, target string) *Proxy {
	return &Proxy{
		l:         l,
		target:    target,
		dialer:    net.Dialer{Timeout: dialTimeout},
		forwarded: map[*pipe]struct{}{},
		held:      map[net.Conn]struct{}{},
	}
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() net.Addr { return p.l.Addr() }

// Set changes the faults. Starting a partition cuts every forwarded
// connection; healing it closes every blackholed one. A latency change
// applies to bytes that arrive from then on.
func (p *Proxy) Set(partitioned bool, latency time.Duration) {
	latency = max(latency, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = latency
	if partitioned == p.partitioned {
		return
	}
	p.partitioned = partitioned
	if partitioned {
		for c := range p.forwarded {
			c.close()
		}
		clear(p.forwarded)
		return
	}
	for c := range p.held {
		_ = c.Close()
	}
	clear(p.held)
}

// Apply sets the faults described by f (its Partitioned and Latency).
func (p *Proxy) Apply(f simdir.Fault) error {
	var latency time.Duration
	if f.Latency != "" {
		var err error
		if latency, err = time.ParseDuration(f.Latency); err != nil {
			return fmt.Errorf("fault latency %q: %w", f.Latency, err)
		}
	}
	p.Set(f.Partitioned, latency)
	return nil
}

// State returns the faults in effect.
func (p *Proxy) State() (partitioned bool, latency time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.partitioned, p.latency
}

// Run accepts and serves connections until ctx ends, then closes the
// listener and every connection and returns nil once all are done. It
// returns an error if accepting fails for another reason.
func (p *Proxy) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = p.l.Close() })
	defer stop()
	defer p.shutdown()

	var tempDelay time.Duration
	for {
		c, err := p.l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() {
				// Out of file descriptors and the like: retry as net/http does.
				tempDelay = min(max(2*tempDelay, 5*time.Millisecond), time.Second)
				time.Sleep(tempDelay)
				continue
			}
			return fmt.Errorf("fault proxy accepting on %s: %w", p.l.Addr(), err)
		}
		tempDelay = 0
		p.accept(ctx, c)
	}
}

func (p *Proxy) shutdown() {
	_ = p.l.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.forwarded {
		c.close()
	}
	clear(p.forwarded)
	for c := range p.held {
		_ = c.Close()
	}
	clear(p.held)
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept(ctx context.Context, client net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = client.Close()
		return
	}
	p.wg.Add(1)
	if p.partitioned {
		p.held[client] = struct{}{}
		go p.blackhole(client)
		return
	}
	go p.forward(ctx, client)
}

// blackhole swallows what the client sends until the connection is closed
// (by the client, or by the proxy on heal or shutdown).
func (p *Proxy) blackhole(client net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(io.Discard, client)
	_ = client.Close()
	p.mu.Lock()
	delete(p.held, client)
	p.mu.Unlock()
}

func (p *Proxy) forward(ctx context.Context, client net.Conn) {
	defer p.wg.Done()
	upstream, err := p.dialer.DialContext(ctx, "tcp", p.target)
	if err != nil {
		// The API server is down: the client sees its connection closed.
		_ = client.Close()
		return
	}
	c := &pipe{client: client, upstream: upstream, closed: make(chan struct{})}
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		c.close()
		return
	case p.partitioned:
		// The partition started while dialing: blackhole the client.
		p.held[client] = struct{}{}
		p.mu.Unlock()
		_ = upstream.Close()
		p.wg.Add(1)
		p.blackhole(client)
		return
	}
	p.forwarded[c] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.finish(c.copyDelayed(upstream, client, p.State), upstream)
	}()
	go func() {
		defer wg.Done()
		_, err := io.Copy(client, upstream)
		c.finish(err, client)
	}()
	wg.Wait()
	c.close()
	p.mu.Lock()
	delete(p.forwarded, c)
	p.mu.Unlock()
}

// copyDelayed copies src to dst, holding each chunk for the latency in
// effect (per state) when it arrived.
func (c *pipe) copyDelayed(dst io.Writer, src io.Reader, state func() (bool, time.Duration)) error {
	type chunk struct {
		data []byte
		due  time.Time
	}
	line := make(chan chunk, delayLineChunks)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(line)
		for {
			buf := make([]byte, chunkSize)
			n, err := src.Read(buf)
			if n > 0 {
				_, latency := state()
				select {
				case line <- chunk{data: buf[:n], due: time.Now().Add(latency)}:
				case <-done:
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for ch := range line {
		if d := time.Until(ch.due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.closed:
				t.Stop()
				return net.ErrClosed
			}
		}
		if _, err := dst.Write(ch.data); err != nil {
			return err
		}
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// pipe is one forwarded connection: the client's and the upstream's.
type pipe struct {
	client, upstream net.Conn
	once             sync.Once
	closed           chan struct{}
}

// finish ends one direction: a clean end of input is passed on as a
// half-close of dst, an error cuts the whole connection.
func (c *pipe) finish(err error, dst net.Conn) {
	if err != nil {
		c.close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.close()
}

func (c *pipe) close() {
	c.once.Do(func() {
		close(c.closed)
		_ = c.client.Close()
		_ = c.upstream.Close()
	})
}
