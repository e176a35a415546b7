package profiling

import (
	"runtime"
	"testing"
)

func TestSampleHeapOnlyWhenProfiled(t *testing.T) {
	const defaultRate = 512 * 1024
	for _, tc := range []struct {
		name      string
		pprofAddr string
		godebug   string
		want      int
	}{
		{"endpoints off", "0", "", 0},
		{"endpoints not set", "", "", 0},
		{"endpoints on", "127.0.0.1:6060", "", defaultRate},
		{"operator's rate kept", "0", "gctrace=1,memprofilerate=4096", defaultRate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := runtime.MemProfileRate
			t.Cleanup(func() { runtime.MemProfileRate = saved })
			runtime.MemProfileRate = defaultRate
			t.Setenv("GODEBUG", tc.godebug)
			SampleHeapOnlyWhenProfiled(tc.pprofAddr)
			if runtime.MemProfileRate != tc.want {
				t.Errorf("MemProfileRate = %d, want %d", runtime.MemProfileRate, tc.want)
			}
		})
	}
}
