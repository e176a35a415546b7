// Package framework starts atoll the way a user does, as a separate
// `atoll up` process on a temporary data directory, and hands tests clients
// for the real API servers it runs. Every integration and e2e test builds on
// it; nothing here fakes an API server.
//
// A test package starts one world in TestMain (RunWithControlPlane) or a
// test starts its own (StartControlPlane). Tests build objects with the
// builders of pkg/util/testing (Deployment adds the simulated world's
// defaults), write them with Create, CreateAndCleanup and Update, read
// bindings and clusters with GetBinding and GetCluster, and wait with
// Eventually and Consistently. A world's members are reached with
// MemberClientset, MemberKubectl and MemberConfig, and driven with Fault,
// InjectFault and Load. Integration tests that run the controller under test
// themselves do so with StartManager and read its metrics with MetricValue.
package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// ReadyMarker is what `atoll up` prints once it serves (pkg/cli/up).
const ReadyMarker = "atoll ready"

// Tests use controller-runtime clients; route their logs to klog like
// atoll's own.
func init() { ctrllog.SetLogger(klog.NewKlogr()) }

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the atoll binary under test: $ATOLL_BIN when set (make test
// sets it), otherwise one built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("building atoll: %v", err)
	}
	return bin
}

func binary() (string, error) {
	if p := os.Getenv("ATOLL_BIN"); p != "" {
		return p, nil
	}
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "atoll-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "atoll")
		// make build carries the version ldflags the embedded API server needs.
		cmd := exec.Command("make", "-s", "build", "BIN="+binPath)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("make build: %w\n%s", err, out)
		}
	})
	return binPath, buildErr
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// ControlPlane is an `atoll up` process.
type ControlPlane struct {
	DataDir    string
	Kubeconfig string
	// ReadyLine is the line `atoll up` printed when it became ready.
	ReadyLine string
	// ReadyAfter is the time from process start to the ready line.
	ReadyAfter time.Duration

	args    []string
	members int
	cmd     *exec.Cmd
	stderr  *SyncBuffer
	exited  chan struct{}
	err     error
}

// Options for StartControlPlane.
type Options struct {
	// DataDir to use; a fresh temporary directory when empty.
	DataDir string
	// Members is the number of simulated member clusters (default none).
	Members int
	// Args are extra `atoll up` flags.
	Args []string
}

// StartControlPlane runs `atoll up` and waits for its ready line. The
// process is stopped when the test ends.
func StartControlPlane(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	cp, err := TryStartControlPlane(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TryStartControlPlane is StartControlPlane for a test of how a start
// fails: it returns the error (with the process's standard error and log
// tails) instead of failing the test.
func TryStartControlPlane(t testing.TB, opts Options) (*ControlPlane, error) {
	t.Helper()
	dir := opts.DataDir
	if dir == "" {
		dir = keptIfFailed(t)
	}
	cp := &ControlPlane{DataDir: dir, args: opts.Args, members: opts.Members}
	if err := cp.start(Binary(t)); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping atoll up: %v", err)
		}
	})
	return cp, nil
}

// keptIfFailed makes a data directory that is removed when t ends, unless
// t failed: then its logs say why, and the test's log says where it is.
// Register it before the cleanup that stops the process using it, so that
// the process stops first.
func keptIfFailed(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "atoll-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept data dir of the failed test: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// Start runs `atoll up` on the same data directory again after Stop.
func (cp *ControlPlane) Start(t testing.TB) {
	t.Helper()
	if err := cp.start(Binary(t)); err != nil {
		t.Fatal(err)
	}
}

func (cp *ControlPlane) start(bin string) error {
	args := append([]string{"up", "--data-dir", cp.DataDir, "--members", strconv.Itoa(cp.members)}, cp.args...)
	cmd := exec.Command(bin, args...)
	// A test binary that dies without its cleanup (a panic, a timeout's
	// kill) takes the control plane with it instead of leaving it running
	// and using the machine for later tests and benchmarks. SIGTERM: atoll
	// up stops its members and control plane as on Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cp.stderr = &SyncBuffer{}
	cmd.Stderr = cp.stderr
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	cp.cmd, cp.exited, cp.err = cmd, make(chan struct{}), nil

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ReadyMarker) {
				select {
				case ready <- sc.Text():
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		cp.err = cmd.Wait()
		close(cp.exited)
	}()

	select {
	case line := <-ready:
		cp.ReadyLine, cp.ReadyAfter = line, time.Since(started)
		cp.Kubeconfig = filepath.Join(cp.DataDir, "kubeconfig")
		return nil
	case <-cp.exited:
		return fmt.Errorf("atoll up exited before ready (%v); stderr:\n%s%s", cp.err, cp.stderr.String(), cp.logTail()) //nolint:errorlint // cp.err is nil after a clean exit; %w would print %!w(<nil>)
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		<-cp.exited
		return fmt.Errorf("atoll up not ready after 5m; stderr:\n%s%s", cp.stderr.String(), cp.logTail())
	}
}

// Stop sends SIGTERM and waits for a clean exit.
func (cp *ControlPlane) Stop() error {
	if cp.cmd == nil {
		return nil
	}
	defer func() { cp.cmd = nil }()
	select {
	case <-cp.exited:
		return fmt.Errorf("atoll up had already exited: %v; stderr:\n%s", cp.err, cp.stderr.String()) //nolint:errorlint // cp.err is nil after a clean exit; %w would print %!w(<nil>)
	default:
	}
	_ = cp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-cp.exited:
	case <-time.After(60 * time.Second):
		_ = cp.cmd.Process.Kill()
		<-cp.exited
		return fmt.Errorf("atoll up did not exit within 60s of SIGTERM")
	}
	if cp.err != nil {
		return fmt.Errorf("atoll up exited with %w; stderr:\n%s", cp.err, cp.stderr.String())
	}
	return nil
}

// PID is the process id of the running `atoll up`.
func (cp *ControlPlane) PID() int { return cp.cmd.Process.Pid }

// ControlPlanePID is the process id of the control-plane process that
// `atoll up` runs (etcd, kube-apiserver and the controllers), from
// DATA-DIR/control-plane/status.json; 0 when it has not reported yet.
func (cp *ControlPlane) ControlPlanePID() int {
	var st simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.ControlPlaneStatusFile(cp.DataDir), &st); err != nil {
		return 0
	}
	return st.PID
}

// Stderr is what the process has written to standard error so far.
func (cp *ControlPlane) Stderr() string { return cp.stderr.String() }

// RESTConfig is an admin client config read from the written kubeconfig.
func (cp *ControlPlane) RESTConfig(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", cp.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg
}

// Client is a controller-runtime client that knows atoll's API groups.
func (cp *ControlPlane) Client(t testing.TB) client.Client {
	t.Helper()
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("building client: %v", err)
	}
	return c
}

func (cp *ControlPlane) logTail() string {
	var tail strings.Builder
	for _, name := range []string{"atoll.log", "control-plane.log"} {
		data, err := os.ReadFile(filepath.Join(cp.DataDir, "logs", name))
		if err != nil {
			continue
		}
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&tail, "\n%s tail:\n%s", name, data)
	}
	return tail.String()
}

// Context returns a context bounded by d and cancelled when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// SyncBuffer is a bytes.Buffer a process may write to while a test reads
// it (exec.Cmd's Stdout and Stderr).
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// RunWithControlPlane starts one control plane for a whole test package,
// stores it in *cp, runs the tests and stops it. Use it from TestMain.
func RunWithControlPlane(m *testing.M, cp **ControlPlane, opts Options) int {
	dir, err := os.MkdirTemp("", "atoll-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	keep := false
	defer func() {
		if keep {
			fmt.Fprintln(os.Stderr, "kept data dir of the failed run:", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	bin, err := binary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*cp = &ControlPlane{DataDir: dir, args: opts.Args, members: opts.Members}
	if err := (*cp).start(bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	keep = code != 0
	if err := (*cp).Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Atoll runs an atoll subcommand (e.g. "sim", "load", …) against this
// data dir's world and returns its combined output; it fails the test when
// the command fails.
func (cp *ControlPlane) Atoll(t testing.TB, args ...string) string {
	t.Helper()
	out, err := cp.TryAtoll(t, args...)
	if err != nil {
		t.Fatalf("atoll %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TryAtoll runs an atoll subcommand like Atoll and returns its combined
// output and error, so a test can check how a command is refused.
func (cp *ControlPlane) TryAtoll(t testing.TB, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(Binary(t), args...).CombinedOutput()
	return string(out), err
}

// MemberConfig is an admin client config straight to member name's API
// server.
func (cp *ControlPlane) MemberConfig(t testing.TB, name string) *rest.Config {
	t.Helper()
	return cp.configFrom(t, filepath.Join(cp.DataDir, "members", name, "kubeconfig"))
}

// MemberProxyConfig reaches member name through its fault proxy, the way
// the federation control plane does.
func (cp *ControlPlane) MemberProxyConfig(t testing.TB, name string) *rest.Config {
	t.Helper()
	return cp.configFrom(t, filepath.Join(cp.DataDir, "members", name, "proxy-kubeconfig"))
}

func (cp *ControlPlane) configFrom(t testing.TB, path string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg
}

// Eventually polls cond every interval until it returns true or timeout
// passes, then fails the test with what and the last message cond gave.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
