package manager

import "testing"

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
