package cmds

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runControllerManager runs `controller-manager args...` and returns the
// configuration its action got.
func runControllerManager(args ...string) (*ControllerManager, error) {
	var got *ControllerManager
	cmd := NewControllerManagerCommand(func(_ context.Context, c *ControllerManager) error { got = c; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

// parsed runs `controller-manager args...` and returns its configuration,
// or nil once it has checked that the run failed with wantErr.
func parsed(t *testing.T, args []string, wantErr string) *ControllerManager {
	t.Helper()
	got, err := runControllerManager(args...)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one containing %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestManagerRateAndEventFlags(t *testing.T) {
	cases := map[string]struct {
		args       []string
		qps        float32
		eventTypes []string
		wantErr    string
	}{
		"defaults: no client-side limit, both event types": {qps: -1, eventTypes: []string{"Normal", "Warning"}},
		"a limit":             {args: []string{"--kube-api-qps=50", "--kube-api-burst=100"}, qps: 50, eventTypes: []string{"Normal", "Warning"}},
		"warnings only":       {args: []string{"--event-types=Warning"}, qps: -1, eventTypes: []string{"Warning"}},
		"no events":           {args: []string{"--event-types="}, qps: -1, eventTypes: []string{}},
		"zero qps":            {args: []string{"--kube-api-qps=0"}, wantErr: "--kube-api-qps: 0 would leave client-go's default of 5"},
		"limit without burst": {args: []string{"--kube-api-qps=50", "--kube-api-burst=0"}, wantErr: "--kube-api-burst: must be at least 1"},
		"unknown event type":  {args: []string{"--event-types=Normal,Info"}, wantErr: `--event-types: "Info" is not an event type`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := parsed(t, tc.args, tc.wantErr)
			if got == nil {
				return
			}
			// nil would record every type (manager.Options.EventTypes).
			if got.Manager.KubeAPIQPS != tc.qps || got.Manager.EventTypes == nil ||
				strings.Join(got.Manager.EventTypes, ",") != strings.Join(tc.eventTypes, ",") {
				t.Errorf("qps %v, event types %q; want %v, %q", got.Manager.KubeAPIQPS, got.Manager.EventTypes, tc.qps, tc.eventTypes)
			}
		})
	}
}

func TestManagerWorkerFlags(t *testing.T) {
	defaults := Workers{ResourceTemplate: 32, ResourceBinding: 16, ClusterResourceBinding: 16, Scheduler: 16, Cluster: 5, DependentResource: 2}
	cases := map[string]struct {
		args    []string
		want    Workers
		wantErr string
	}{
		"defaults": {want: defaults},
		"Karmada's names": {
			args: []string{"--concurrent-resource-template-syncs=32", "--concurrent-resourcebinding-syncs=12", "--concurrent-clusterresourcebinding-syncs=3",
				"--concurrent-scheduler-syncs=4", "--concurrent-cluster-syncs=10", "--concurrent-dependent-resource-syncs=1"},
			want: Workers{ResourceTemplate: 32, ResourceBinding: 12, ClusterResourceBinding: 3, Scheduler: 4, Cluster: 10, DependentResource: 1},
		},
		"zero":     {args: []string{"--concurrent-cluster-syncs=0"}, wantErr: "--concurrent-cluster-syncs: must be at least 1, got 0"},
		"negative": {args: []string{"--concurrent-resource-template-syncs=-4"}, wantErr: "--concurrent-resource-template-syncs: must be at least 1, got -4"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := parsed(t, tc.args, tc.wantErr)
			if got != nil && got.Manager.Workers != tc.want {
				t.Errorf("workers %+v, want %+v", got.Manager.Workers, tc.want)
			}
		})
	}
}
