// Package supervisor runs the simulated member clusters of `atoll up`, each
// as its own `atoll sim cluster` OS process, and keeps them in the state
// their fault files ask for: a member whose fault says Stopped is killed
// (SIGKILL: a real crash) and kept down; any other member that is not running
// — stopped by a fault that was lifted, or crashed on its own — is started
// again, with exponential back-off while it keeps crashing.
//
// The supervisor shares nothing with the members but files under the data
// directory (see package simdir). Each member's standard output and error
// are appended to DIR/members/NAME/logs/process.log.
package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// Defaults of Options.
const (
	DefaultReadyTimeout = 3 * time.Minute
	DefaultPollInterval = 200 * time.Millisecond
	DefaultStopTimeout  = 20 * time.Second
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = 30 * time.Second

	// DefaultProvider is the provider of the members DefaultMembers returns.
	DefaultProvider = "atoll-sim"

	// logTailBytes bounds the tail of process.log quoted in errors.
	logTailBytes = 4 << 10
	logTailLines = 20
)

// MemberSpec describes one member process.
type MemberSpec struct {
	// Name is the member cluster's name; its data lives in DIR/members/NAME.
	Name     string
	Region   string
	Zone     string
	Provider string
	// ExtraArgs are appended to the `atoll sim cluster` command line.
	ExtraArgs []string

	// Args, when set, replace the `atoll sim cluster …` command line after
	// the binary (ExtraArgs are still appended): `atoll up` supervises its
	// control-plane process this way.
	Args []string
	// Dir, when set, replaces DIR/members/NAME as the directory of the
	// process's fault.json, status.json and logs/process.log.
	Dir string
	// ExtraFiles are passed to the process as descriptors 3, 4, … (the
	// control-plane process inherits the data-dir lock this way).
	ExtraFiles []*os.File
}

// Options configure a Supervisor. Zero durations take the defaults above.
type Options struct {
	// Binary is the atoll executable (os.Executable() in production).
	Binary string
	// DataDir is the top-level data directory of `atoll up`.
	DataDir string
	Members []MemberSpec
	// Env are extra KEY=VALUE environment variables for the members, on top
	// of the supervisor's own environment.
	Env []string
	// Log receives the supervisor's own events; members log to their
	// process.log.
	Log klog.Logger
	// Clock measures back-off; the real clock when nil.
	Clock clock.WithTicker

	// ReadyTimeout bounds how long Start waits for all members to be Ready.
	ReadyTimeout time.Duration
	// PollInterval is how often fault and status files are read.
	PollInterval time.Duration
	// StopTimeout is how long members get to exit after SIGTERM before they
	// are killed.
	StopTimeout time.Duration
	// MinBackoff and MaxBackoff bound the delay before restarting a member
	// that keeps crashing; it doubles with every crash. A member that ran
	// for MaxBackoff or longer before it crashed starts over at MinBackoff.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// DefaultMembers returns member1..memberN spread over regions cn-east,
// cn-east, cn-south, then cn-north, cn-west, … cycling, each in a zone of
// its own, all of provider atoll-sim.
func DefaultMembers(n int) []MemberSpec {
	regions := []string{"cn-east", "cn-south", "cn-north", "cn-west"}
	members := make([]MemberSpec, 0, max(n, 0))
	perRegion := map[string]int{}
	for i := range n {
		// member1 and member2 share cn-east; then one region after another.
		region := "cn-east"
		if i >= 2 {
			region = regions[(i-1)%len(regions)]
		}
		zone := fmt.Sprintf("%s-%d%c", region, 1+perRegion[region]/26, 'a'+rune(perRegion[region]%26))
		perRegion[region]++
		members = append(members, MemberSpec{
			Name:     fmt.Sprintf("member%d", i+1),
			Region:   region,
			Zone:     zone,
			Provider: DefaultProvider,
		})
	}
	return members
}

// Supervisor starts, restarts and stops member processes.
type Supervisor struct {
	opts Options
	log  klog.Logger

	mu      sync.Mutex
	members []*member
	closing bool

	stopping chan struct{} // closed when shutdown begins
	stopOnce sync.Once
	stopped  chan struct{} // closed when shutdown is complete
}

// member is the supervisor's view of one member.
type member struct {
	spec MemberSpec
	proc *process // nil when not running
	// crashes counts consecutive crashes; nextStart is the earliest restart.
	crashes   int
	nextStart time.Time
	// keptDown: the member is down because its fault says Stopped.
	keptDown bool
}

// process is one started member process.
type process struct {
	pid     int
	started time.Time
	done    chan struct{} // closed once the process has exited and was reaped
	err     error         // exit error, valid after done
	killed  bool          // the supervisor killed it on purpose
	ready   bool
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// New returns a supervisor for opts.Members. Nothing runs before Start or
// Run.
func New(opts Options) *Supervisor {
	opts.ReadyTimeout = orDefault(opts.ReadyTimeout, DefaultReadyTimeout)
	opts.PollInterval = orDefault(opts.PollInterval, DefaultPollInterval)
	opts.StopTimeout = orDefault(opts.StopTimeout, DefaultStopTimeout)
	opts.MinBackoff = orDefault(opts.MinBackoff, DefaultMinBackoff)
	opts.MaxBackoff = max(orDefault(opts.MaxBackoff, DefaultMaxBackoff), opts.MinBackoff)
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Supervisor{
		opts:     opts,
		log:      opts.Log.WithName("supervisor"),
		stopping: make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	for _, spec := range opts.Members {
		s.members = append(s.members, &member{spec: spec})
	}
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Start starts every member in parallel and returns once all of them are
// Ready: their status.json says Ready with the PID of the process started
// here. A member whose fault says Stopped is left down. If a member exits
// or is not Ready within the ready timeout, Start stops every member and
// returns an error naming the members that failed, with the tail of their
// process.log.
func (s *Supervisor) Start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ReadyTimeout)
	defer cancel()

	errs := make([]error, len(s.members))
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() { errs[i] = s.startAndWait(ctx, m) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.Stop()
		return err
	}
	return nil
}

func (s *Supervisor) startAndWait(ctx context.Context, m *member) error {
	fault, err := s.readFault(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if fault.Stopped {
		m.keptDown = true
		s.mu.Unlock()
		s.log.Info("Member kept down: its fault says stopped; `atoll sim fault NAME start` brings it back", "member", m.spec.Name)
		return nil
	}
	p := m.proc
	if p == nil {
		if p, err = s.startLocked(m); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()

	ticker := time.NewTicker(s.opts.PollInterval)
	defer ticker.Stop()
	for {
		if ready, err := s.checkReady(m, p); err != nil {
			return err
		} else if ready {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("member %s exited before it was ready: %v%s", m.spec.Name, p.err, s.logTail(m)) //nolint:errorlint // p.err is nil for exit status 0; %w would print %!w(<nil>)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("member %s not ready after %v: %w%s", m.spec.Name, s.opts.ReadyTimeout, ctx.Err(), s.logTail(m))
		case <-s.stopping:
			return fmt.Errorf("member %s: supervisor stopped before it was ready", m.spec.Name)
		case <-p.done:
		case <-ticker.C:
		}
	}
}

// checkReady reports whether process p of m says it is Ready, logging it
// the first time.
func (s *Supervisor) checkReady(m *member, p *process) (bool, error) {
	s.mu.Lock()
	ready := p.ready
	s.mu.Unlock()
	if ready {
		return true, nil
	}
	var st simdir.MemberStatus
	if _, err := simdir.ReadJSON(filepath.Join(s.dir(m), "status.json"), &st); err != nil {
		// A status file caught half-written by a non-atomic writer: retry.
		s.log.V(1).Info("Reading member status", "member", m.spec.Name, "err", err)
		return false, nil
	}
	if !st.Ready || st.PID != p.pid {
		return false, nil
	}
	s.mu.Lock()
	p.ready = true
	s.mu.Unlock()
	s.log.Info("Member ready", "member", m.spec.Name, "pid", p.pid, "apiServer", st.APIServer, "proxy", st.Proxy)
	return true, nil
}

// Run keeps every member in the state its fault file asks for until ctx
// ends or Stop is called, then stops all members (see Stop).
func (s *Supervisor) Run(ctx context.Context) {
	defer s.Stop()
	ticker := s.opts.Clock.NewTicker(s.opts.PollInterval)
	defer ticker.Stop()
	for {
		for _, m := range s.members {
			s.reconcile(m)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.stopping:
			return
		case <-ticker.C():
		}
	}
}

// reconcile brings m one step closer to the state its fault asks for.
func (s *Supervisor) reconcile(m *member) {
	log := s.log.WithValues("member", m.spec.Name)
	fault, err := s.readFault(m)
	if err != nil {
		log.Error(err, "Reading fault; keeping the member as it is")
		return
	}
	now := s.opts.Clock.Now()

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	p := m.proc
	if p != nil && p.exited() {
		m.proc = nil
		if !p.killed {
			ran := now.Sub(p.started)
			if ran >= s.opts.MaxBackoff {
				m.crashes = 0
			}
			m.crashes++
			delay := backoff(m.crashes, s.opts.MinBackoff, s.opts.MaxBackoff)
			m.nextStart = now.Add(delay)
			log.Info("Member exited on its own; restarting it after a back-off", "pid", p.pid, "err", p.err, "ran", ran.Round(time.Millisecond), "crashes", m.crashes, "backoff", delay)
		}
		p = nil
	}
	switch {
	case fault.Stopped:
		if p != nil && !p.killed {
			log.Info("Killing member: its fault says stopped", "pid", p.pid, "faultGeneration", fault.Generation)
			p.killed = true
			killGroup(p.pid, syscall.SIGKILL)
		}
		if !m.keptDown {
			m.keptDown = true
			m.crashes, m.nextStart = 0, time.Time{}
		}
	case p == nil && !now.Before(m.nextStart):
		if m.keptDown {
			log.Info("Starting member: its fault no longer says stopped", "faultGeneration", fault.Generation)
		}
		m.keptDown = false
		if p, err = s.startLocked(m); err != nil {
			m.crashes++
			m.nextStart = now.Add(backoff(m.crashes, s.opts.MinBackoff, s.opts.MaxBackoff))
			log.Error(err, "Starting member")
		}
	}
	watch := p != nil && !p.killed
	s.mu.Unlock()

	if watch {
		_, _ = s.checkReady(m, p)
	}
}

// backoff is the delay before the restart that follows crash number
// crashes (1 for the first): min doubled for every earlier crash, at most
// max.
func backoff(crashes int, minDelay, maxDelay time.Duration) time.Duration {
	d := minDelay
	for i := 1; i < crashes && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// startLocked starts m's process; s.mu is held.
func (s *Supervisor) startLocked(m *member) (*process, error) {
	if s.closing {
		return nil, fmt.Errorf("member %s: supervisor is stopping", m.spec.Name)
	}
	logPath := s.processLog(m)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, fmt.Errorf("member %s: creating log directory: %w", m.spec.Name, err)
	}
	out, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("member %s: opening %s: %w", m.spec.Name, logPath, err)
	}
	defer func() { _ = out.Close() }() // the child has its own descriptor

	args := s.args(m.spec)
	cmd := exec.Command(s.opts.Binary, args...)
	cmd.Env = append(os.Environ(), s.opts.Env...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.ExtraFiles = m.spec.ExtraFiles
	// Setpgid: the member and anything it starts form one process group, so
	// a kill reaches all of it. Pdeathsig: the member dies with atoll up
	// (strictly, with the OS thread that started it; Go keeps those alive
	// unless a goroutine exits while locked to its thread).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	now := s.opts.Clock.Now()
	_, _ = fmt.Fprintf(out, "--- %s atoll up: starting %s %s\n", now.Format(time.RFC3339), s.opts.Binary, quoteArgs(args))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("member %s: starting %s: %w", m.spec.Name, s.opts.Binary, err)
	}
	p := &process{pid: cmd.Process.Pid, started: now, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	m.proc = p
	s.log.Info("Started member", "member", m.spec.Name, "pid", p.pid, "log", logPath)
	return p, nil
}

// args is the command line of member spec after the binary.
func (s *Supervisor) args(spec MemberSpec) []string {
	if len(spec.Args) > 0 {
		return append(append([]string(nil), spec.Args...), spec.ExtraArgs...)
	}
	args := []string{"sim", "cluster", "--name", spec.Name, "--data-dir", s.opts.DataDir}
	for _, f := range []struct{ flag, value string }{
		{"--region", spec.Region}, {"--zone", spec.Zone}, {"--provider", spec.Provider},
	} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return append(args, spec.ExtraArgs...)
}

func quoteArgs(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || bytes.ContainsAny([]byte(a), " \t\n\"'\\$") {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	return b.String()
}

// Stop stops every member: SIGTERM, up to the stop timeout to exit, then
// SIGKILL to the member's process group. It returns once every member
// process has exited, ends Run, and keeps members from starting again.
// Calling it again waits for the first call to finish.
func (s *Supervisor) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.mu.Lock()
		s.closing = true
		var procs []*process
		for _, m := range s.members {
			if m.proc != nil {
				procs = append(procs, m.proc)
				if !m.proc.exited() {
					s.log.Info("Stopping member", "member", m.spec.Name, "pid", m.proc.pid)
					_ = syscall.Kill(m.proc.pid, syscall.SIGTERM)
				}
			}
		}
		s.mu.Unlock()

		deadline := time.NewTimer(s.opts.StopTimeout)
		defer deadline.Stop()
		for _, p := range procs {
			select {
			case <-p.done:
			case <-deadline.C:
				// Too late for everyone still running.
				for _, q := range procs {
					if !q.exited() {
						s.log.Info("Killing member that did not stop in time", "pid", q.pid, "timeout", s.opts.StopTimeout)
						killGroup(q.pid, syscall.SIGKILL)
					}
				}
				<-p.done
			}
		}
		for _, p := range procs {
			<-p.done
			// Whatever the member left behind in its process group goes too.
			killGroup(p.pid, syscall.SIGKILL)
		}
		close(s.stopped)
	})
	<-s.stopped
}

// killGroup signals the process group led by pid (the member and anything
// it started: members run with Setpgid). Linux does not reuse pid while the
// group has members, so this is also how stragglers are reached after the
// leader exited.
func killGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// ProcessLog is where member name's standard output and error go.
func ProcessLog(dataDir, name string) string {
	return filepath.Join(simdir.MemberDir(dataDir, name), "logs", "process.log")
}

// dir holds m's fault.json, status.json and logs.
func (s *Supervisor) dir(m *member) string {
	if m.spec.Dir != "" {
		return m.spec.Dir
	}
	return simdir.MemberDir(s.opts.DataDir, m.spec.Name)
}

func (s *Supervisor) processLog(m *member) string {
	return filepath.Join(s.dir(m), "logs", "process.log")
}

func (s *Supervisor) readFault(m *member) (simdir.Fault, error) {
	var f simdir.Fault
	if _, err := simdir.ReadJSON(filepath.Join(s.dir(m), "fault.json"), &f); err != nil {
		return simdir.Fault{}, fmt.Errorf("member %s: %w", m.spec.Name, err)
	}
	return f, nil
}

// logTail returns the last lines of m's process.log, formatted to end an
// error message, or "" when there are none.
func (s *Supervisor) logTail(m *member) string {
	path := s.processLog(m)
	tail, err := Tail(path, logTailBytes, logTailLines)
	if err != nil || len(tail) == 0 {
		return ""
	}
	return fmt.Sprintf("\nlast lines of %s:\n%s", path, tail)
}

// Tail returns at most the last maxLines lines within the last maxBytes of
// the file at path.
func Tail(path string, maxBytes int64, maxLines int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	off := max(info.Size()-maxBytes, 0)
	buf := make([]byte, info.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return "", err
	}
	buf = bytes.TrimRight(buf, "\n")
	if off > 0 {
		// Drop the partial first line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	lines := bytes.Split(buf, []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return string(bytes.Join(lines, []byte("\n"))), nil
}
