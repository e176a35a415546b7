package cmds

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
)

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// runSim runs `sim args...` and returns the configuration its action got.
func runSim(args ...string) (*SimCluster, *SimLoad, *SimFault, error) {
	var (
		cluster *SimCluster
		load    *SimLoad
		fault   *SimFault
	)
	cmd := NewSimCommand(SimActions{
		Cluster: func(_ context.Context, c *SimCluster) error { cluster = c; return nil },
		Load:    func(_ context.Context, c *SimLoad) error { load = c; return nil },
		Fault:   func(_ context.Context, c *SimFault) error { fault = c; return nil },
	})
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.ExecuteContext(context.Background())
	return cluster, load, fault, err
}

func TestSimCluster(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    *SimCluster
		wantErr string
	}{
		"defaults": {
			args: []string{"cluster", "--name", "member1"},
			want: &SimCluster{
				Name: "member1", DataDir: ".atoll", Nodes: 3,
				NodeCPU: resource.MustParse("8"), NodeMemory: resource.MustParse("32Gi"), MaxPods: 110,
				PodReadyDelay: time.Second, JobPodRunTime: 5 * time.Second, HPASyncPeriod: 5 * time.Second, HPADownscaleStabilization: 30 * time.Second,
				Logging: Logging{LogFile: ".atoll/members/member1/logs/member.log"},
			},
		},
		"everything set": {
			args: []string{"cluster", "--name", "m2", "--data-dir", "/d", "--nodes", "5", "--node-cpu", "2500m",
				"--node-memory", "8Gi", "--max-pods", "30", "--pod-ready-delay", "0s", "--job-pod-run-time", "2s", "--hpa-sync-period", "1s",
				"--hpa-downscale-stabilization", "0s", "--region", "cn-east", "--zone", "cn-east-1a",
				"--provider", "atoll-sim", "--log-file", "/l.log", "-v", "2"},
			want: &SimCluster{
				Name: "m2", DataDir: "/d", Nodes: 5,
				NodeCPU: resource.MustParse("2500m"), NodeMemory: resource.MustParse("8Gi"), MaxPods: 30,
				JobPodRunTime: 2 * time.Second, HPASyncPeriod: time.Second,
				Region: "cn-east", Zone: "cn-east-1a", Provider: "atoll-sim",
				Logging: Logging{LogFile: "/l.log", Verbosity: 2},
			},
		},
		"name required":  {args: []string{"cluster"}, wantErr: `"name" not set`},
		"bad name":       {args: []string{"cluster", "--name", "Member_1"}, wantErr: `--name "Member_1"`},
		"bad quantity":   {args: []string{"cluster", "--name", "m", "--node-cpu", "lots"}, wantErr: "--node-cpu"},
		"negative nodes": {args: []string{"cluster", "--name", "m", "--nodes", "-1"}, wantErr: "--nodes -1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, _, err := runSim(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, quantityEqual); diff != "" {
				t.Errorf("SimCluster (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimLoad(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    *SimLoad
		wantErr string
	}{
		"cores":      {args: []string{"load", "web", "3"}, want: &SimLoad{DataDir: ".atoll", App: "web", CPU: resource.MustParse("3")}},
		"millicores": {args: []string{"load", "--data-dir", "/d", "web", "2500m"}, want: &SimLoad{DataDir: "/d", App: "web", CPU: resource.MustParse("2500m")}},
		"bad CPU":    {args: []string{"load", "web", "much"}, wantErr: `CPU "much"`},
		"missing":    {args: []string{"load", "web"}, wantErr: "accepts 2 arg(s)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, got, _, err := runSim(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, quantityEqual, cmpopts.IgnoreFields(SimLoad{}, "Out")); diff != "" {
				t.Errorf("SimLoad (-want +got):\n%s", diff)
			}
			if got.Out == nil {
				t.Errorf("SimLoad.Out not set")
			}
		})
	}
}

func TestSimFault(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    *SimFault
		wantErr string
	}{
		"defaults": {
			args: []string{"fault", "member1", "stop"},
			want: &SimFault{DataDir: ".atoll", Target: "member1", Action: "stop", Latency: 500 * time.Millisecond, Wait: 30 * time.Second},
		},
		"slow": {
			args: []string{"fault", "member2", "slow", "--latency", "2s", "--wait", "0", "--data-dir", "/d"},
			want: &SimFault{DataDir: "/d", Target: "member2", Action: "slow", Latency: 2 * time.Second},
		},
		"missing action": {args: []string{"fault", "member1"}, wantErr: "accepts 2 arg(s)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, got, err := runSim(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(SimFault{}, "Out")); diff != "" {
				t.Errorf("SimFault (-want +got):\n%s", diff)
			}
		})
	}
}
