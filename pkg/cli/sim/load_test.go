package sim

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		app, cpu string
		wantOut  string
	}{
		{app: "web", cpu: "3", wantOut: "web: offered load 3000m CPU\n"},
		{app: "api", cpu: "2500m", wantOut: "api: offered load 2500m CPU\n"},
		{app: "web", cpu: "0", wantOut: "web: no offered load\n"},
	}
	for _, step := range steps {
		var out bytes.Buffer
		cfg := cmds.SimLoad{DataDir: dir, App: step.app, CPU: resource.MustParse(step.cpu), Out: &out}
		if err := Load(context.Background(), &cfg); err != nil {
			t.Fatalf("Load %s %s: %v", step.app, step.cpu, err)
		}
		if diff := cmp.Diff(step.wantOut, out.String()); diff != "" {
			t.Errorf("Load %s %s output (-want +got):\n%s", step.app, step.cpu, diff)
		}
	}
	var got simdir.Loads
	if _, err := simdir.ReadJSON(simdir.LoadsFile(dir), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(simdir.Loads{"api": 2500}, got); diff != "" {
		t.Errorf("loads.json (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := map[string]struct {
		dataDir string // relative to a temp dir
		app     string
		cpu     string
		wantErr string
	}{
		"negative":    {app: "web", cpu: "-1", wantErr: "CPU -1"},
		"bad app":     {app: "not an app!", cpu: "1", wantErr: "not an app!"},
		"no such dir": {dataDir: "missing", app: "web", cpu: "1", wantErr: "--data-dir"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.dataDir)
			cfg := cmds.SimLoad{DataDir: dir, App: tc.app, CPU: resource.MustParse(tc.cpu), Out: &bytes.Buffer{}}
			err := Load(context.Background(), &cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Load error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
