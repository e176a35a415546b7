package testing

import (
	goruntime "runtime"
	"testing"
	"unsafe"
)

// ReportHeldBytes is a benchmark of what objects cost to hold: it calls
// newObject once per b.Loop iteration, keeps every result, and reports the
// heap they still hold after a collection, per object, as unit (for
// instance "held-bytes/binding"). The slice that keeps them is not counted
// (with b.Loop, b.N is not known before the loop, so the slice grows inside
// the measured interval). It collects twice before each reading, so that
// what sync.Pools hold (a compressor is hundreds of kilobytes) is gone on
// both sides instead of on one or the other.
func ReportHeldBytes(b *testing.B, unit string, newObject func() any) {
	b.Helper()
	var kept []any
	var before, after goruntime.MemStats
	collect()
	goruntime.ReadMemStats(&before)
	for b.Loop() {
		kept = append(kept, newObject())
	}
	b.StopTimer()
	slice := uint64(cap(kept)) * uint64(unsafe.Sizeof(any(nil)))
	collect()
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc-slice)/float64(len(kept)), unit)
	goruntime.KeepAlive(kept)
}

// collect runs the collector twice: a sync.Pool keeps its items through one
// collection (in its victim cache) and drops them in the next.
func collect() {
	goruntime.GC()
	goruntime.GC()
}
