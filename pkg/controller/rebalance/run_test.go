package rebalance

import (
	"strings"
	"testing"

	"github.com/atoll-dev/atoll/pkg/rebalance"
)

func TestSourcesAbovePlan(t *testing.T) {
	prev := rebalance.Distribution{"member1": 6, "member2": 9, "member3": 2}
	next := rebalance.Distribution{"member1": 3, "member2": 9}
	cases := map[string]struct {
		observed map[string]observed
		hpa      bool
		want     []string // one substring per waiting source, in order
	}{
		"all down": {observed: map[string]observed{
			"member1": {reported: true, replicas: 3}, "member2": {reported: true, replicas: 9},
		}},
		"a source still runs more": {observed: map[string]observed{
			"member1": {reported: true, replicas: 5},
		}, want: []string{"member1 still runs 5 pods, plan 3"}},
		// The CI failure of d4b306a: a source whose status item carried no
		// status counted as down, and the step ended with it at 6.
		"a source that kept replicas has not reported": {observed: map[string]observed{
			"member1": {reported: false},
		}, want: []string{"member1 has not reported its status"}},
		"an emptied source that no longer reports is down": {observed: map[string]observed{
			"member1": {reported: true, replicas: 3},
		}},
		"an emptied source still running": {observed: map[string]observed{
			"member1": {reported: true, replicas: 3}, "member3": {reported: true, replicas: 1},
		}, want: []string{"member3 still runs 1 pods, plan 0"}},
		"a source HPA wanting more": {hpa: true, observed: map[string]observed{
			"member1": {reported: true, replicas: 3, hpaReported: true, hpaDesired: 4},
		}, want: []string{"member1's HPA wants 4 replicas, plan 3"}},
		"a target is never waited on here": {observed: map[string]observed{
			"member1": {reported: true, replicas: 3}, "member2": {reported: false},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := sourcesAbovePlan(prev, next, tc.observed, tc.hpa)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d reasons like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("reason %d: got %q, want it to say %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
