package sim

import (
	"bytes"
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// controlPlaneDataDir returns a data dir with a control-plane directory (as
// atoll up leaves it) and the given members.
func controlPlaneDataDir(t *testing.T, members ...string) string {
	t.Helper()
	dir := dataDir(t, members...)
	if err := os.MkdirAll(simdir.ControlPlaneDir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readControlPlaneFault(t *testing.T, dir string) (simdir.Fault, bool) {
	t.Helper()
	var f simdir.Fault
	ok, err := simdir.ReadJSON(simdir.ControlPlaneFaultFile(dir), &f)
	if err != nil {
		t.Fatal(err)
	}
	return f, ok
}

// closedServer is the URL of a loopback port nothing listens on.
func closedServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "https://" + addr
}

// apiServer serves /readyz over TLS (ok while *ready) and writes the data
// dir's kubeconfig for it; it returns its URL.
func apiServer(t *testing.T, dir string, ready *atomic.Bool) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["atoll"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["atoll"] = &clientcmdapi.Context{Cluster: "atoll", AuthInfo: "admin"}
	cfg.CurrentContext = "atoll"
	if err := clientcmd.WriteToFile(*cfg, filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

func TestControlPlaneFaultValidation(t *testing.T) {
	cases := map[string]struct {
		noControlPlane bool
		action         string
		wantErr        []string
	}{
		"partition": {
			action:  "partition",
			wantErr: []string{`TARGET "control-plane"`, `ACTION "partition" is not supported`, "supported actions: stop, start"},
		},
		"heal":    {action: "heal", wantErr: []string{`ACTION "heal"`, "stop, start"}},
		"slow":    {action: "slow", wantErr: []string{`ACTION "slow"`, "stop, start"}},
		"fast":    {action: "fast", wantErr: []string{`ACTION "fast"`, "stop, start"}},
		"unknown": {action: "explode", wantErr: []string{`ACTION "explode"`, "stop, start"}},
		"no control plane in the data dir": {
			noControlPlane: true,
			action:         "stop",
			wantErr:        []string{`TARGET "control-plane"`, "no control plane in", "running atoll up"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := dataDir(t, "member1")
			if !tc.noControlPlane {
				dir = controlPlaneDataDir(t, "member1")
			}
			cfg := cmds.SimFault{DataDir: dir, Target: "control-plane", Action: tc.action, Latency: time.Second, Out: &bytes.Buffer{}}
			err := Fault(context.Background(), &cfg)
			if err == nil {
				t.Fatal("Fault succeeded, want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if _, ok := readControlPlaneFault(t, dir); ok {
				t.Error("control-plane fault.json written although the command was invalid")
			}
			if _, ok := readFault(t, dir, "member1"); ok {
				t.Error("member1's fault.json written by a control-plane fault")
			}
		})
	}
}

func TestControlPlaneFaultChanges(t *testing.T) {
	cases := map[string]struct {
		before simdir.Fault
		action string
		want   simdir.Fault
	}{
		"stop":  {action: "stop", want: simdir.Fault{Generation: 1, Stopped: true}},
		"start": {before: simdir.Fault{Generation: 3, Stopped: true}, action: "start", want: simdir.Fault{Generation: 4}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := controlPlaneDataDir(t, "member1")
			if tc.before != (simdir.Fault{}) {
				writeJSON(t, simdir.ControlPlaneFaultFile(dir), tc.before)
			}
			cfg := cmds.SimFault{DataDir: dir, Target: "control-plane", Action: tc.action, Out: &bytes.Buffer{}}
			if err := Fault(context.Background(), &cfg); err != nil {
				t.Fatalf("Fault: %v", err)
			}
			got, _ := readControlPlaneFault(t, dir)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("control-plane fault.json (-want +got):\n%s", diff)
			}
			if _, ok := readFault(t, dir, "member1"); ok {
				t.Error("member1's fault.json written by a control-plane fault")
			}
		})
	}
}

func TestControlPlaneFaultWaits(t *testing.T) {
	dead, live, other := deadPID(t), livePID(t), livePID(t)
	listening := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(listening.Close)
	cases := map[string]struct {
		fault  simdir.Fault
		status func(server string) simdir.MemberStatus
		// later, when set, replaces the status shortly after the fault is written.
		later func(server string) *simdir.MemberStatus
		// notReady: /readyz answers 500.
		notReady bool
		action   string
		wait     time.Duration
		wantOut  string
		wantErr  string
	}{
		"stop: process gone, port refuses connections": {
			status: func(string) simdir.MemberStatus {
				return simdir.MemberStatus{PID: dead, Ready: true, APIServer: closedServer(t)}
			},
			action:  "stop",
			wantOut: "refuses connections; atoll up keeps it down until `atoll sim fault control-plane start`",
		},
		"stop: the process still runs": {
			status: func(string) simdir.MemberStatus {
				return simdir.MemberStatus{PID: live, Ready: true, APIServer: closedServer(t)}
			},
			action:  "stop",
			wait:    300 * time.Millisecond,
			wantErr: "still runs",
		},
		"stop: something still listens on the port": {
			status: func(string) simdir.MemberStatus {
				return simdir.MemberStatus{PID: dead, Ready: true, APIServer: listening.URL}
			},
			action:  "stop",
			wait:    300 * time.Millisecond,
			wantErr: "still accepts connections",
		},
		"start: already running": {
			status:  func(s string) simdir.MemberStatus { return simdir.MemberStatus{PID: live, Ready: true, APIServer: s} },
			action:  "start",
			wantOut: "control-plane is already running: process",
		},
		"start: a new process comes up and /readyz is ok": {
			fault:  simdir.Fault{Generation: 1, Stopped: true},
			status: func(s string) simdir.MemberStatus { return simdir.MemberStatus{PID: dead, Ready: true, APIServer: s} },
			later: func(s string) *simdir.MemberStatus {
				return &simdir.MemberStatus{PID: other, Ready: true, APIServer: s}
			},
			action:  "start",
			wantOut: "/readyz is ok",
		},
		"start: new process but /readyz fails": {
			fault:  simdir.Fault{Generation: 1, Stopped: true},
			status: func(s string) simdir.MemberStatus { return simdir.MemberStatus{PID: dead, Ready: true, APIServer: s} },
			later: func(s string) *simdir.MemberStatus {
				return &simdir.MemberStatus{PID: other, Ready: true, APIServer: s}
			},
			notReady: true,
			action:   "start",
			wait:     time.Second,
			wantErr:  "/readyz is not ok",
		},
		"start: nothing comes up": {
			fault:   simdir.Fault{Generation: 1, Stopped: true},
			status:  func(s string) simdir.MemberStatus { return simdir.MemberStatus{PID: dead, Ready: true, APIServer: s} },
			action:  "start",
			wait:    300 * time.Millisecond,
			wantErr: "no new Ready process",
		},
		"no wait": {
			status:  func(s string) simdir.MemberStatus { return simdir.MemberStatus{PID: live, Ready: true, APIServer: s} },
			action:  "stop",
			wait:    -1,
			wantOut: "control-plane: stop recorded (fault generation 1); not waiting",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := controlPlaneDataDir(t)
			var ready atomic.Bool
			ready.Store(!tc.notReady)
			server := apiServer(t, dir, &ready)
			if tc.fault != (simdir.Fault{}) {
				writeJSON(t, simdir.ControlPlaneFaultFile(dir), tc.fault)
			}
			writeJSON(t, simdir.ControlPlaneStatusFile(dir), tc.status(server))
			if tc.later != nil {
				go func() {
					// atoll up starts a new control-plane process.
					time.Sleep(200 * time.Millisecond)
					_ = simdir.WriteJSON(simdir.ControlPlaneStatusFile(dir), tc.later(server))
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
			cfg := cmds.SimFault{DataDir: dir, Target: "control-plane", Action: tc.action, Wait: wait, Out: &out}
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
