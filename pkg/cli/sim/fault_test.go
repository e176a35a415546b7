package sim

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// dataDir returns a data dir with the given members (directories only).
func dataDir(t *testing.T, members ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range members {
		if err := os.MkdirAll(simdir.MemberDir(dir, m), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFault(t *testing.T, dir, member string) (simdir.Fault, bool) {
	t.Helper()
	var f simdir.Fault
	ok, err := simdir.ReadJSON(simdir.FaultFile(dir, member), &f)
	if err != nil {
		t.Fatal(err)
	}
	return f, ok
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := simdir.WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// livePID returns the PID of a process that runs until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

func TestFaultValidation(t *testing.T) {
	cases := map[string]struct {
		members []string
		cfg     cmds.SimFault
		wantErr []string
	}{
		"unknown member": {
			members: []string{"member1", "member2"},
			cfg:     cmds.SimFault{Target: "member9", Action: "stop"},
			wantErr: []string{`TARGET "member9"`, "known members: member1, member2", "or control-plane"},
		},
		"no members": {
			cfg:     cmds.SimFault{Target: "member1", Action: "stop"},
			wantErr: []string{`TARGET "member1"`, "no members yet"},
		},
		"path is not a member": {
			members: []string{"member1"},
			cfg:     cmds.SimFault{Target: "member1/..", Action: "stop"},
			wantErr: []string{`TARGET "member1/.."`},
		},
		"unknown action": {
			members: []string{"member1"},
			cfg:     cmds.SimFault{Target: "member1", Action: "explode"},
			wantErr: []string{`ACTION "explode"`, "stop, start, partition, heal, slow, fast"},
		},
		"slow without latency": {
			members: []string{"member1"},
			cfg:     cmds.SimFault{Target: "member1", Action: "slow"},
			wantErr: []string{"--latency 0s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := dataDir(t, tc.members...)
			tc.cfg.DataDir = dir
			tc.cfg.Out = &bytes.Buffer{}
			err := Fault(context.Background(), &tc.cfg)
			if err == nil {
				t.Fatal("Fault succeeded, want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			for _, m := range tc.members {
				if _, ok := readFault(t, dir, m); ok {
					t.Errorf("fault.json of %s written although the command was invalid", m)
				}
			}
		})
	}
}

func TestFaultChanges(t *testing.T) {
	cases := map[string]struct {
		before  simdir.Fault
		action  string
		latency time.Duration
		want    simdir.Fault
	}{
		"stop": {
			action: "stop",
			want:   simdir.Fault{Generation: 1, Stopped: true},
		},
		"start keeps other faults": {
			before: simdir.Fault{Generation: 4, Stopped: true, Partitioned: true},
			action: "start",
			want:   simdir.Fault{Generation: 5, Partitioned: true},
		},
		"partition": {
			before: simdir.Fault{Generation: 2, Latency: "1s"},
			action: "partition",
			want:   simdir.Fault{Generation: 3, Partitioned: true, Latency: "1s"},
		},
		"heal": {
			before: simdir.Fault{Generation: 3, Partitioned: true},
			action: "heal",
			want:   simdir.Fault{Generation: 4},
		},
		"slow": {
			action:  "slow",
			latency: 1500 * time.Millisecond,
			want:    simdir.Fault{Generation: 1, Latency: "1.5s"},
		},
		"fast": {
			before: simdir.Fault{Generation: 7, Latency: "2s"},
			action: "fast",
			want:   simdir.Fault{Generation: 8},
		},
		"repeating an action still moves the generation": {
			before: simdir.Fault{Generation: 1, Partitioned: true},
			action: "partition",
			want:   simdir.Fault{Generation: 2, Partitioned: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := dataDir(t, "member1")
			if tc.before != (simdir.Fault{}) {
				writeJSON(t, simdir.FaultFile(dir, "member1"), tc.before)
			}
			var out bytes.Buffer
			cfg := cmds.SimFault{DataDir: dir, Target: "member1", Action: tc.action, Latency: tc.latency, Out: &out}
			if err := Fault(context.Background(), &cfg); err != nil {
				t.Fatalf("Fault: %v", err)
			}
			got, _ := readFault(t, dir, "member1")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fault.json (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateFaultConcurrent(t *testing.T) {
	const writers = 20
	dir := dataDir(t, "member1")
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if _, _, err := UpdateFault(dir, "member1", func(f *simdir.Fault) { f.Partitioned = !f.Partitioned }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := readFault(t, dir, "member1")
	if diff := cmp.Diff(simdir.Fault{Generation: writers}, got); diff != "" {
		t.Errorf("fault.json after %d concurrent updates (-want +got):\n%s", writers, diff)
	}
}

func TestFaultWaits(t *testing.T) {
	dead, live, other := deadPID(t), livePID(t), livePID(t)
	cases := map[string]struct {
		fault  simdir.Fault
		status simdir.MemberStatus
		// later, when set, replaces the status shortly after the fault is written.
		later   *simdir.MemberStatus
		action  string
		wait    time.Duration
		wantOut string
		wantErr string
	}{
		"stop: the process is gone": {
			status:  simdir.MemberStatus{PID: dead, Ready: true},
			action:  "stop",
			wantOut: "member1 stopped: process",
		},
		"stop: the process still runs": {
			status:  simdir.MemberStatus{PID: live, Ready: true},
			action:  "stop",
			wait:    300 * time.Millisecond,
			wantErr: "still runs",
		},
		"start: already running": {
			status:  simdir.MemberStatus{PID: live, Ready: true},
			action:  "start",
			wantOut: "member1 is already running",
		},
		"start: a new process comes up": {
			fault:   simdir.Fault{Generation: 1, Stopped: true},
			status:  simdir.MemberStatus{PID: dead, Ready: true},
			later:   &simdir.MemberStatus{PID: other, Ready: true},
			action:  "start",
			wantOut: "member1 started: process",
		},
		"start: nothing comes up": {
			fault:   simdir.Fault{Generation: 1, Stopped: true},
			status:  simdir.MemberStatus{PID: dead, Ready: true},
			action:  "start",
			wait:    300 * time.Millisecond,
			wantErr: "no new Ready process",
		},
		"partition: observed": {
			status:  simdir.MemberStatus{PID: live, Ready: true},
			later:   &simdir.MemberStatus{PID: live, Ready: true, ObservedFaultGeneration: 1},
			action:  "partition",
			wantOut: "member1 partitioned",
		},
		"slow: observed": {
			fault:   simdir.Fault{Generation: 5},
			status:  simdir.MemberStatus{PID: live, Ready: true, ObservedFaultGeneration: 5},
			later:   &simdir.MemberStatus{PID: live, Ready: true, ObservedFaultGeneration: 6},
			action:  "slow",
			wantOut: "adds 500ms to every request (fault generation 6)",
		},
		"heal: not observed": {
			fault:   simdir.Fault{Generation: 5, Partitioned: true},
			status:  simdir.MemberStatus{PID: live, Ready: true, ObservedFaultGeneration: 5},
			action:  "heal",
			wait:    300 * time.Millisecond,
			wantErr: "observed only generation 5",
		},
		"partition on a stopped member is recorded": {
			fault:   simdir.Fault{Generation: 2, Stopped: true},
			status:  simdir.MemberStatus{PID: dead},
			action:  "partition",
			wantOut: "member1 is stopped: partition recorded (fault generation 3)",
		},
		"no wait": {
			status:  simdir.MemberStatus{PID: live, Ready: true},
			action:  "partition",
			wait:    -1,
			wantOut: "partition recorded (fault generation 1); not waiting",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := dataDir(t, "member1")
			if tc.fault != (simdir.Fault{}) {
				writeJSON(t, simdir.FaultFile(dir, "member1"), tc.fault)
			}
			writeJSON(t, simdir.StatusFile(dir, "member1"), tc.status)
			if tc.later != nil {
				go func() {
					// The member notices the fault.
					time.Sleep(200 * time.Millisecond)
					_ = simdir.WriteJSON(simdir.StatusFile(dir, "member1"), tc.later)
				}()
			}
			wait := tc.wait
			switch {
			case wait == 0:
				wait = 10 * time.Second
			case wait < 0:
				wait = 0
			}
			var out bytes.Buffer
			cfg := cmds.SimFault{DataDir: dir, Target: "member1", Action: tc.action, Latency: 500 * time.Millisecond, Wait: wait, Out: &out}
			err := Fault(context.Background(), &cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fault error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fault: %v", err)
			}
			if !strings.Contains(out.String(), tc.wantOut) || strings.Count(out.String(), "\n") != 1 {
				t.Errorf("Fault printed %q, want one line containing %q", out.String(), tc.wantOut)
			}
		})
	}
}
