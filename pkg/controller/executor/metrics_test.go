package executor

import (
	"errors"
	"testing"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// TestSyncOutcome: every result names an outcome that has a counter (the
// counters are resolved once, so an outcome without one would panic).
func TestSyncOutcome(t *testing.T) {
	counters := newSyncCounters("test")
	cases := map[string]struct {
		res  clusterResult
		want string
	}{
		"member cache still listing": {res: clusterResult{listing: &memberList{}}, want: "parked"},
		"apply failed":               {res: clusterResult{err: errors.New("refused")}, want: "failed"},
		"applied":                    {res: clusterResult{written: true, current: true, item: workv1alpha2.AggregatedStatusItem{Applied: true}}, want: "applied"},
		"copy current":               {res: clusterResult{current: true, item: workv1alpha2.AggregatedStatusItem{Applied: true}}, want: "current"},
		"blocked by a conflict":      {res: clusterResult{item: workv1alpha2.AggregatedStatusItem{AppliedMessage: "exists"}}, want: "other"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := syncOutcome(tc.res)
			if got != tc.want {
				t.Errorf("syncOutcome = %q, want %q", got, tc.want)
			}
			if counters[got] == nil {
				t.Errorf("no counter for outcome %q", got)
			}
		})
	}
}
