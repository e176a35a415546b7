package v1alpha1

import "testing"

func TestNormalizePurgeMode(t *testing.T) {
	cases := map[string]struct {
		in   PurgeMode
		want PurgeMode
	}{
		"Immediately becomes Directly":           {in: PurgeModeImmediately, want: PurgeModeDirectly},
		"Graciously becomes Gracefully":          {in: PurgeModeGraciously, want: PurgeModeGracefully},
		"Directly is kept":                       {in: PurgeModeDirectly, want: PurgeModeDirectly},
		"Gracefully is kept":                     {in: PurgeModeGracefully, want: PurgeModeGracefully},
		"Never is kept":                          {in: PurgeModeNever, want: PurgeModeNever},
		"empty is kept for the caller's default": {in: "", want: ""},
		"unknown value is passed through":        {in: "Bad", want: "Bad"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NormalizePurgeMode(tc.in); got != tc.want {
				t.Errorf("NormalizePurgeMode(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
