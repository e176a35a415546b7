package supervisor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// fakeMemberEnv makes the test binary act as an `atoll sim cluster` member
// process (the helper-process pattern): it writes status.json Ready with
// its PID, prints the ready line and waits for SIGTERM. A file named
// fake-mode in the member's directory changes that: "fail" exits at once
// with an error, "ignore-term" never exits on SIGTERM.
const fakeMemberEnv = "ATOLL_SUPERVISOR_TEST_FAKE_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeMemberEnv) != "" {
		os.Exit(fakeMember(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeArgs is what a fake member records about its command line.
type fakeArgs struct {
	Region, Zone, Provider, Nodes string
	Rest                          []string
	// ExtraFile is the content of descriptor 3, when it was passed one.
	ExtraFile string `json:",omitempty"`
}

func fakeMember(args []string) int {
	if len(args) < 2 || args[0] != "sim" || args[1] != "cluster" {
		fmt.Fprintf(os.Stderr, "fake member: want `sim cluster ...`, got %q\n", args)
		return 2
	}
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	name := fs.String("name", "", "")
	dataDir := fs.String("data-dir", "", "")
	var got fakeArgs
	fs.StringVar(&got.Region, "region", "", "")
	fs.StringVar(&got.Zone, "zone", "", "")
	fs.StringVar(&got.Provider, "provider", "", "")
	fs.StringVar(&got.Nodes, "nodes", "", "")
	// --dir replaces DIR/members/NAME (a process with MemberSpec.Dir).
	ownDir := fs.String("dir", "", "")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	got.Rest = fs.Args()
	dir := simdir.MemberDir(*dataDir, *name)
	if *ownDir != "" {
		dir = *ownDir
		// Such a process is passed descriptor 3 (TestOwnCommandAndDir).
		if data, err := io.ReadAll(os.NewFile(3, "extra")); err == nil {
			got.ExtraFile = string(data)
		}
	}
	if err := simdir.WriteJSON(filepath.Join(dir, "args.json"), got); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mode, _ := os.ReadFile(filepath.Join(dir, "fake-mode"))
	signals := make(chan os.Signal, 1)
	switch strings.TrimSpace(string(mode)) {
	case "fail":
		fmt.Fprintln(os.Stderr, "fake member: failing on purpose")
		return 3
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	default:
		signal.Notify(signals, syscall.SIGTERM)
	}
	st := simdir.MemberStatus{PID: os.Getpid(), Ready: true, Updated: time.Now()}
	if err := simdir.WriteJSON(filepath.Join(dir, "status.json"), st); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("atoll member ready: %s\n", *name)
	<-signals
	fmt.Println("fake member: SIGTERM, exiting")
	return 0
}

func testOptions(t *testing.T, members ...MemberSpec) Options {
	t.Helper()
	return Options{
		Binary:       os.Args[0],
		DataDir:      t.TempDir(),
		Members:      members,
		Env:          []string{fakeMemberEnv + "=1"},
		ReadyTimeout: 30 * time.Second,
		PollInterval: 20 * time.Millisecond,
		StopTimeout:  10 * time.Second,
		MinBackoff:   20 * time.Millisecond,
		MaxBackoff:   100 * time.Millisecond,
	}
}

func setFakeMode(t *testing.T, dataDir, name, mode string) {
	t.Helper()
	dir := simdir.MemberDir(dataDir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fake-mode"), []byte(mode), 0o600); err != nil {
		t.Fatal(err)
	}
}

func setFault(t *testing.T, dataDir, name string, f simdir.Fault) {
	t.Helper()
	if err := simdir.WriteJSON(simdir.FaultFile(dataDir, name), f); err != nil {
		t.Fatal(err)
	}
}

func readStatus(t *testing.T, dataDir, name string) simdir.MemberStatus {
	t.Helper()
	var st simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.StatusFile(dataDir, name), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// eventually polls cond until it holds or 15s have passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runSupervisor runs s until the test ends and returns a func that ends it
// and waits for Run to return.
func runSupervisor(t *testing.T, s *Supervisor) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.Run(ctx)
		close(done)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

func TestStartFaultsCrashesAndStop(t *testing.T) {
	opts := testOptions(t,
		MemberSpec{Name: "member1", Region: "cn-east", Zone: "cn-east-1a", Provider: "atoll-sim", ExtraArgs: []string{"--nodes", "2", "extra"}},
		MemberSpec{Name: "member2", Region: "cn-south", Zone: "cn-south-1a", Provider: "atoll-sim"},
	)
	dir := opts.DataDir
	s := New(opts)
	t.Cleanup(s.Stop)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}

	// Start returned: both members are Ready and alive, started with the
	// flags of their spec, and their output is in process.log.
	first := map[string]int{}
	for _, name := range []string{"member1", "member2"} {
		st := readStatus(t, dir, name)
		if !st.Ready || !alive(st.PID) {
			t.Fatalf("%s after Start: status %+v, alive %v; want Ready and alive", name, st, alive(st.PID))
		}
		first[name] = st.PID
	}
	var gotArgs fakeArgs
	if _, err := simdir.ReadJSON(filepath.Join(simdir.MemberDir(dir, "member1"), "args.json"), &gotArgs); err != nil {
		t.Fatal(err)
	}
	wantArgs := fakeArgs{Region: "cn-east", Zone: "cn-east-1a", Provider: "atoll-sim", Nodes: "2", Rest: []string{"extra"}}
	if diff := cmp.Diff(wantArgs, gotArgs); diff != "" {
		t.Errorf("member1 command line (-want +got):\n%s", diff)
	}
	eventually(t, "member1's ready line is in process.log", func() bool {
		log, _ := os.ReadFile(ProcessLog(dir, "member1"))
		return strings.Contains(string(log), "atoll member ready: member1")
	})

	stop := runSupervisor(t, s)

	// Stopped: the process is killed and kept down.
	setFault(t, dir, "member1", simdir.Fault{Generation: 1, Stopped: true})
	eventually(t, "member1 is killed", func() bool { return !alive(first["member1"]) })
	time.Sleep(10 * opts.PollInterval)
	if st := readStatus(t, dir, "member1"); st.PID != first["member1"] {
		t.Errorf("member1 was started again (pid %d) while its fault says stopped", st.PID)
	}

	// Not stopped any more: it comes back as a new process.
	setFault(t, dir, "member1", simdir.Fault{Generation: 2})
	eventually(t, "member1 runs again", func() bool {
		st := readStatus(t, dir, "member1")
		return st.Ready && st.PID != first["member1"] && alive(st.PID)
	})

	// A crash is restarted.
	if err := syscall.Kill(first["member2"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "member2 is restarted after a crash", func() bool {
		st := readStatus(t, dir, "member2")
		return st.Ready && st.PID != first["member2"] && alive(st.PID)
	})

	// Ending Run stops everything.
	last := []int{readStatus(t, dir, "member1").PID, readStatus(t, dir, "member2").PID}
	stop()
	for _, pid := range append(last, first["member1"], first["member2"]) {
		if alive(pid) {
			t.Errorf("pid %d still alive after Run ended", pid)
		}
	}
	s.Stop() // idempotent
	log, _ := os.ReadFile(ProcessLog(dir, "member1"))
	if !strings.Contains(string(log), "fake member: SIGTERM, exiting") {
		t.Errorf("member1 was not stopped with SIGTERM; process.log:\n%s", log)
	}
}

// TestOwnCommandAndDir: a process with its own command line, directory
// and descriptors (how `atoll up` supervises its control plane) is started,
// kept down and restarted like a member, through the files in its Dir.
func TestOwnCommandAndDir(t *testing.T) {
	dataDir := t.TempDir()
	cpDir := filepath.Join(dataDir, "control-plane")
	extra, err := os.CreateTemp(t.TempDir(), "extra")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extra.WriteString("inherited"); err != nil {
		t.Fatal(err)
	}
	if _, err := extra.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t, MemberSpec{
		Name:       "control-plane",
		Args:       []string{"sim", "cluster", "--name", "cp", "--data-dir", dataDir, "--dir", cpDir},
		ExtraArgs:  []string{"--nodes", "7"},
		Dir:        cpDir,
		ExtraFiles: []*os.File{extra},
	})
	opts.DataDir = dataDir
	s := New(opts)
	t.Cleanup(s.Stop)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var gotArgs fakeArgs
	if _, err := simdir.ReadJSON(filepath.Join(cpDir, "args.json"), &gotArgs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fakeArgs{Nodes: "7", Rest: []string{}, ExtraFile: "inherited"}, gotArgs); diff != "" {
		t.Errorf("command line and descriptor 3 (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(simdir.MemberDir(dataDir, "control-plane")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a member directory was made for a process with its own Dir (stat: %v)", err)
	}
	readOwn := func() simdir.MemberStatus {
		var st simdir.MemberStatus
		if _, err := simdir.ReadJSON(filepath.Join(cpDir, "status.json"), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	first := readOwn().PID
	runSupervisor(t, s)

	if err := simdir.WriteJSON(filepath.Join(cpDir, "fault.json"), simdir.Fault{Generation: 1, Stopped: true}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the process is killed", func() bool { return !alive(first) })
	time.Sleep(10 * opts.PollInterval)
	if pid := readOwn().PID; pid != first {
		t.Errorf("started again (pid %d) while its fault says stopped", pid)
	}
	if err := simdir.WriteJSON(filepath.Join(cpDir, "fault.json"), simdir.Fault{Generation: 2}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the process runs again", func() bool {
		st := readOwn()
		return st.Ready && st.PID != first && alive(st.PID)
	})
	log, _ := os.ReadFile(filepath.Join(cpDir, "logs", "process.log"))
	if !strings.Contains(string(log), "atoll member ready: cp") {
		t.Errorf("output not in DIR/control-plane/logs/process.log:\n%s", log)
	}
}

func TestStartFailureNamesMemberAndLog(t *testing.T) {
	opts := testOptions(t, MemberSpec{Name: "good"}, MemberSpec{Name: "bad"})
	setFakeMode(t, opts.DataDir, "bad", "fail")
	s := New(opts)
	err := s.Start(context.Background())
	if err == nil {
		t.Fatal("Start succeeded with a member that fails")
	}
	for _, want := range []string{"member bad", "failing on purpose"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "member good") {
		t.Errorf("Start error %q blames the good member", err)
	}
	// Start stopped the member that did come up.
	if pid := readStatus(t, opts.DataDir, "good").PID; alive(pid) {
		t.Errorf("member good (pid %d) still alive after Start failed", pid)
	}
}

func TestStartKeepsStoppedMemberDown(t *testing.T) {
	opts := testOptions(t, MemberSpec{Name: "member1"})
	setFault(t, opts.DataDir, "member1", simdir.Fault{Generation: 3, Stopped: true})
	s := New(opts)
	t.Cleanup(s.Stop)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	runSupervisor(t, s)
	time.Sleep(10 * opts.PollInterval)
	if _, err := os.Stat(simdir.StatusFile(opts.DataDir, "member1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("member1 was started although its fault says stopped (status file: %v)", err)
	}
}

func TestCrashLoopKeepsRestarting(t *testing.T) {
	opts := testOptions(t, MemberSpec{Name: "member1"})
	setFakeMode(t, opts.DataDir, "member1", "fail")
	s := New(opts)
	stop := runSupervisor(t, s)
	starts := func() int {
		log, _ := os.ReadFile(ProcessLog(opts.DataDir, "member1"))
		return strings.Count(string(log), "atoll up: starting")
	}
	eventually(t, "a crashing member is started three times", func() bool { return starts() >= 3 })

	// Once it stops crashing it stays up.
	setFakeMode(t, opts.DataDir, "member1", "")
	eventually(t, "member1 runs", func() bool {
		var st simdir.MemberStatus
		ok, _ := simdir.ReadJSON(simdir.StatusFile(opts.DataDir, "member1"), &st)
		return ok && st.Ready && alive(st.PID)
	})
	pid := readStatus(t, opts.DataDir, "member1").PID
	stop()
	if alive(pid) {
		t.Errorf("member1 (pid %d) alive after Run ended", pid)
	}
}

func TestStopKillsMemberIgnoringSIGTERM(t *testing.T) {
	opts := testOptions(t, MemberSpec{Name: "member1"})
	opts.StopTimeout = 200 * time.Millisecond
	setFakeMode(t, opts.DataDir, "member1", "ignore-term")
	s := New(opts)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := readStatus(t, opts.DataDir, "member1").PID
	s.Stop()
	if alive(pid) {
		t.Errorf("member1 (pid %d) ignoring SIGTERM is alive after Stop", pid)
	}
}

func TestBackoff(t *testing.T) {
	cases := map[string]struct {
		crashes int
		want    time.Duration
	}{
		"first crash":  {crashes: 1, want: time.Second},
		"second crash": {crashes: 2, want: 2 * time.Second},
		"fifth crash":  {crashes: 5, want: 16 * time.Second},
		"capped":       {crashes: 6, want: 30 * time.Second},
		"long loop":    {crashes: 1000, want: 30 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := backoff(tc.crashes, DefaultMinBackoff, DefaultMaxBackoff); got != tc.want {
				t.Errorf("backoff(%d) = %v, want %v", tc.crashes, got, tc.want)
			}
		})
	}
}

func TestDefaultMembers(t *testing.T) {
	m := func(name, region, zone string) MemberSpec {
		return MemberSpec{Name: name, Region: region, Zone: zone, Provider: "atoll-sim"}
	}
	cases := map[string]struct {
		n    int
		want []MemberSpec
	}{
		"none": {n: 0, want: []MemberSpec{}},
		"three": {n: 3, want: []MemberSpec{
			m("member1", "cn-east", "cn-east-1a"),
			m("member2", "cn-east", "cn-east-1b"),
			m("member3", "cn-south", "cn-south-1a"),
		}},
		"six": {n: 6, want: []MemberSpec{
			m("member1", "cn-east", "cn-east-1a"),
			m("member2", "cn-east", "cn-east-1b"),
			m("member3", "cn-south", "cn-south-1a"),
			m("member4", "cn-north", "cn-north-1a"),
			m("member5", "cn-west", "cn-west-1a"),
			m("member6", "cn-east", "cn-east-1c"),
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DefaultMembers(tc.n)); diff != "" {
				t.Errorf("DefaultMembers(%d) (-want +got):\n%s", tc.n, diff)
			}
		})
	}

	zones := map[string]string{}
	for _, spec := range DefaultMembers(200) {
		if other, ok := zones[spec.Zone]; ok {
			t.Errorf("zone %s of %s is also %s's", spec.Zone, spec.Name, other)
		}
		zones[spec.Zone] = spec.Name
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		maxBytes int64
		maxLines int
		want     string
	}{
		"lines bound": {maxBytes: 4096, maxLines: 2, want: "line 98\nline 99"},
		"bytes bound": {maxBytes: 12, maxLines: 10, want: "line 99"},
		"whole file":  {maxBytes: 1 << 20, maxLines: 1000, want: strings.TrimSuffix(b.String(), "\n")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Tail(path, tc.maxBytes, tc.maxLines)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Tail (-want +got):\n%s", diff)
			}
		})
	}
}
