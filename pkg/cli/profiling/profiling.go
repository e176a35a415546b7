// Package profiling holds the process-wide profiling settings of atoll's
// long-running commands.
package profiling

import (
	"os"
	"runtime"
	"strings"
)

// SampleHeapOnlyWhenProfiled turns the runtime's allocation sampling off in
// a process whose profiling endpoints are off (pprofAddr "0" or empty).
// By default the runtime records one allocation in every 512 KB allocated,
// with its stack, for a heap profile: 1 % of the control-plane process's
// CPU in a restart at 20,000 templates (its embedded API server allocates
// large list buffers), and 5 % of the controller-manager's when a benchmark
// samples every 16 KB. The profile is readable only through
// --pprof-bind-address (the embedded API servers run with
// --profiling=false; a member process has no endpoint at all), so with the
// endpoints off nothing would read it. A rate the operator set
// (GODEBUG=memprofilerate=N) is left as it is.
func SampleHeapOnlyWhenProfiled(pprofAddr string) {
	if pprofAddr != "" && pprofAddr != "0" {
		return
	}
	if strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		return
	}
	runtime.MemProfileRate = 0
}
