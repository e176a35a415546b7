package manager

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestEnabled(t *testing.T) {
	cases := map[string]struct {
		selection []string
		want      bool
	}{
		"all":                 {[]string{"*"}, true},
		"named":               {[]string{"scheduler"}, true},
		"other named":         {[]string{"detector"}, false},
		"all but this one":    {[]string{"*", "-scheduler"}, false},
		"all but another":     {[]string{"*", "-detector"}, true},
		"empty selects none":  {nil, false},
		"disable before star": {[]string{"-scheduler", "*"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Enabled("scheduler", tc.selection); got != tc.want {
				t.Errorf("Enabled(scheduler, %v) = %v, want %v", tc.selection, got, tc.want)
			}
		})
	}
}

func TestFormerNameSelectsTheExecutor(t *testing.T) {
	cases := map[string]struct {
		selection []string
		want      bool
	}{
		"new name":             {[]string{"executor"}, true},
		"former name":          {[]string{"binding"}, true},
		"former name disabled": {[]string{"*", "-binding"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Enabled("executor", tc.selection); got != tc.want {
				t.Errorf("Enabled(executor, %v) = %v, want %v", tc.selection, got, tc.want)
			}
		})
	}
}

func TestControlPlaneConfig(t *testing.T) {
	in := &rest.Config{Host: "https://10.0.0.1:6443", QPS: 5, Burst: 10}
	for name, tc := range map[string]struct {
		opts        Options
		qps         float32
		burst       int
		rateLimiter bool
	}{
		"no client-side limit (the default)": {opts: Options{KubeAPIQPS: -1}, qps: -1, burst: 10},
		"a limit":                            {opts: Options{KubeAPIQPS: 50, KubeAPIBurst: 100}, qps: 50, burst: 100, rateLimiter: true},
		"the kubeconfig's limit":             {qps: 5, burst: 10, rateLimiter: true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := controlPlaneConfig(in, tc.opts)
			if cfg == in || in.DisableCompression || in.RateLimiter != nil {
				t.Fatal("the caller's config was changed")
			}
			if !cfg.DisableCompression {
				t.Error("compression asked of the control plane")
			}
			if cfg.QPS != tc.qps || cfg.Burst != tc.burst || (cfg.RateLimiter != nil) != tc.rateLimiter {
				t.Errorf("qps %v burst %d limiter %v, want %v %d %v", cfg.QPS, cfg.Burst, cfg.RateLimiter != nil, tc.qps, tc.burst, tc.rateLimiter)
			}
		})
	}
}
