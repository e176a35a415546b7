package expiring

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestSince(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name      string
		record    bool
		forget    bool
		after     time.Duration
		wantSince time.Duration
		wantOK    bool
	}{
		{name: "never recorded"},
		{name: "just recorded", record: true, wantOK: true},
		{name: "within the ttl", record: true, after: 2 * time.Second, wantSince: 2 * time.Second, wantOK: true},
		{name: "at the ttl", record: true, after: 3 * time.Second, wantSince: 3 * time.Second},
		{name: "past the ttl", record: true, after: time.Minute, wantSince: time.Minute},
		{name: "forgotten", record: true, forget: true, after: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			times := New[string](clk, 3*time.Second)
			if tt.record {
				times.Record("k")
			}
			if tt.forget {
				times.Forget("k")
			}
			clk.SetTime(start.Add(tt.after))
			since, ok := times.Since("k")
			if ok != tt.wantOK || (tt.record && !tt.forget && since != tt.wantSince) {
				t.Errorf("Since = %v, %v; want %v, %v", since, ok, tt.wantSince, tt.wantOK)
			}
		})
	}
}

// TestSweep checks that the record holds about the last two ttls' keys,
// not every key ever recorded.
func TestSweep(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	times := New[int](clk, 3*time.Second)
	for i := range 10000 {
		times.Record(i)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	times.Record(-1) // within the ttl of the last sweep: no sweep yet
	if n := times.Len(); n != 10001 {
		t.Errorf("%d keys held before a ttl passed, want all 10001", n)
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	times.Record(-2)
	if n := times.Len(); n != 1 {
		t.Errorf("%d keys held after the sweep, want only the last one", n)
	}
	if _, ok := times.Since(-2); !ok {
		t.Error("the key recorded with the sweep was forgotten")
	}
}
