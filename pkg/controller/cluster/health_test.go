package cluster

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	statusTrue    = metav1.ConditionTrue
	statusFalse   = metav1.ConditionFalse
	statusUnknown = metav1.ConditionUnknown
)

// TestDecideReady replays a sequence of probes against a fake clock and
// checks the recorded Ready status after each.
func TestDecideReady(t *testing.T) {
	th := thresholds{success: 30 * time.Second, failure: 20 * time.Second}
	type step struct {
		after    time.Duration // clock step before this probe
		observed metav1.ConditionStatus
		want     metav1.ConditionStatus
		wantWait time.Duration
	}
	cases := map[string]struct {
		initial metav1.ConditionStatus // recorded before the first probe
		steps   []step
	}{
		"no condition takes the first observation at once": {
			initial: "",
			steps:   []step{{0, statusUnknown, statusUnknown, 0}},
		},
		"failure flips only after the failure threshold": {
			initial: statusTrue,
			steps: []step{
				{0, statusUnknown, statusTrue, 20 * time.Second},
				{10 * time.Second, statusUnknown, statusTrue, 10 * time.Second},
				{10 * time.Second, statusUnknown, statusUnknown, 0},
			},
		},
		"a success inside the window resets it": {
			initial: statusTrue,
			steps: []step{
				{0, statusFalse, statusTrue, 20 * time.Second},
				{15 * time.Second, statusTrue, statusTrue, 0},
				{10 * time.Second, statusFalse, statusTrue, 20 * time.Second},
				{15 * time.Second, statusFalse, statusTrue, 5 * time.Second},
				{5 * time.Second, statusFalse, statusFalse, 0},
			},
		},
		"recovery waits for the success threshold": {
			initial: statusUnknown,
			steps: []step{
				{0, statusTrue, statusUnknown, 30 * time.Second},
				{29 * time.Second, statusTrue, statusUnknown, time.Second},
				{time.Second, statusTrue, statusTrue, 0},
			},
		},
		"flapping between not ready and unreachable still fails": {
			initial: statusTrue,
			steps: []step{
				{0, statusFalse, statusTrue, 20 * time.Second},
				{10 * time.Second, statusUnknown, statusTrue, 10 * time.Second},
				{10 * time.Second, statusFalse, statusFalse, 0},
			},
		},
		"unreachable to not ready uses the failure threshold": {
			initial: statusUnknown,
			steps: []step{
				{0, statusFalse, statusUnknown, 20 * time.Second},
				{20 * time.Second, statusFalse, statusFalse, 0},
			},
		},
		"a failure during recovery restarts the success window": {
			initial: statusFalse,
			steps: []step{
				{0, statusTrue, statusFalse, 30 * time.Second},
				{20 * time.Second, statusFalse, statusFalse, 0},
				{5 * time.Second, statusTrue, statusFalse, 30 * time.Second},
				{29 * time.Second, statusTrue, statusFalse, time.Second},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			tr := newTracker()
			recorded := tc.initial
			for i, s := range tc.steps {
				clk.Step(s.after)
				got, wait := tr.decide("c", recorded, s.observed, clk.Now(), th)
				if got != s.want || wait != s.wantWait {
					t.Fatalf("step %d (observed %s): got %s wait %v, want %s wait %v", i, s.observed, got, wait, s.want, s.wantWait)
				}
				recorded = got
			}
		})
	}
}

// TestDecideReadyRestart: a new tracker (a restarted controller) starts
// from the recorded condition and counts the threshold again.
func TestDecideReadyRestart(t *testing.T) {
	th := thresholds{success: 30 * time.Second, failure: 30 * time.Second}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := newTracker()
	if got, _ := before.decide("c", statusTrue, statusUnknown, now, th); got != statusTrue {
		t.Fatalf("got %s, want True while pending", got)
	}
	after := newTracker()
	if got, wait := after.decide("c", statusTrue, statusUnknown, now.Add(29*time.Second), th); got != statusTrue || wait != 30*time.Second {
		t.Fatalf("after restart: got %s wait %v, want True and a full threshold", got, wait)
	}
}

func TestFirstLine(t *testing.T) {
	if got := firstLine([]byte("[-]etcd failed\n[+]ping ok\n")); got != "[-]etcd failed" {
		t.Errorf("firstLine = %q", got)
	}
}
