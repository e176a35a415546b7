package cmds

import (
	"context"
	"strings"
	"testing"
)

func TestControlPlaneKubeconfig(t *testing.T) {
	cases := map[string]struct {
		flag, env, want string
	}{
		"flag wins":           {flag: "/a", env: "/b", want: "/a"},
		"then $KUBECONFIG":    {env: "/b:/c", want: "/b:/c"},
		"then atoll's own":    {want: DefaultKubeconfig},
		"default is ./.atoll": {want: ".atoll/kubeconfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			if got := ControlPlaneKubeconfig(tc.flag); got != tc.want {
				t.Errorf("ControlPlaneKubeconfig(%q) with KUBECONFIG=%q = %q, want %q", tc.flag, tc.env, got, tc.want)
			}
		})
	}
}

func TestValidateClusterName(t *testing.T) {
	cases := map[string]struct {
		name    string
		wantErr string
	}{
		"ok":             {name: "member-1"},
		"48 is fine":     {name: strings.Repeat("a", 48)},
		"49 is too long": {name: strings.Repeat("a", 49), wantErr: "no more than 48 characters"},
		"upper case":     {name: "Member1", wantErr: "RFC 1123"},
		"empty":          {name: "", wantErr: "RFC 1123"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ValidateClusterName(tc.name)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestJoinFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	var got *Join
	cmd := NewJoinCommand(func(_ context.Context, j *Join) error { got = j; return nil })
	cmd.SetArgs([]string{"m1", "--cluster-kubeconfig", "f", "--zone", "z", "--labels", "a=b,c=d"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Name != "m1" || got.ClusterKubeconfig != "f" || got.Zone != "z" || got.Labels["c"] != "d" || got.Kubeconfig != DefaultKubeconfig {
		t.Errorf("parsed %+v", got)
	}
	cmd = NewJoinCommand(func(context.Context, *Join) error { return nil })
	cmd.SetArgs([]string{"m1"})
	cmd.SetErr(new(strings.Builder))
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "cluster-kubeconfig") {
		t.Errorf("join without --cluster-kubeconfig: %v", err)
	}
}
