package rebalance

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
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
			checkReasons(t, sourcesAbovePlan(prev, next, tc.observed, tc.hpa), tc.want)
		})
	}
}

// checkReasons checks got against one substring per expected reason.
func checkReasons(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %q, want %d reasons like %q", got, len(want), want)
	}
	for i := range got {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("reason %d: got %q, want it to say %q", i, got[i], want[i])
		}
	}
}

func TestTargetsWaiting(t *testing.T) {
	prev := rebalance.Distribution{"member1": 4, "member2": 8}
	next := rebalance.Distribution{"member1": 5, "member2": 7}
	cases := map[string]struct {
		observed map[string]observed
		want     []string // one substring per waiting target, in order
	}{
		"the new pod is available": {observed: map[string]observed{
			"member1": {reported: true, current: true, replicas: 5, ready: 5},
		}},
		"not yet available": {observed: map[string]observed{
			"member1": {reported: true, current: true, replicas: 5, ready: 4},
		}, want: []string{"member1 has 4 of 5 available"}},
		// TestRollback's CI failure (session 29): member1 had gone from 5
		// to 4, the binding's status still showed its five Ready pods from
		// before, and the rollback's step back to 5 counted them.
		"enough available, by a report from before the step": {observed: map[string]observed{
			"member1": {reported: true, current: false, replicas: 5, ready: 5},
		}, want: []string{"member1 has not reported the step yet"}},
		"no report": {observed: map[string]observed{}, want: []string{"member1 has 0 of 5 available"}},
		"a source is never waited on here": {observed: map[string]observed{
			"member1": {reported: true, current: true, replicas: 5, ready: 5}, "member2": {reported: true},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkReasons(t, targetsWaiting(prev, next, tc.observed), tc.want)
		})
	}
}

func TestObservedOf(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	item := func(status string) workv1alpha2.AggregatedStatusItem {
		it := workv1alpha2.AggregatedStatusItem{ClusterName: "member1"}
		if status != "" {
			it.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		return it
	}
	cases := map[string]struct {
		item   workv1alpha2.AggregatedStatusItem
		synced bool
		want   observed
	}{
		"observed by the member, status synced": {item: item(`{"replicas":5,"availableReplicas":5,"generation":7,"observedGeneration":7}`), synced: true,
			want: observed{reported: true, replicas: 5, ready: 5, current: true}},
		"the member has not observed the applied generation": {item: item(`{"replicas":5,"availableReplicas":5,"generation":8,"observedGeneration":7}`), synced: true,
			want: observed{reported: true, replicas: 5, ready: 5}},
		"status written for an older binding generation": {item: item(`{"replicas":5,"availableReplicas":5,"generation":7,"observedGeneration":7}`),
			want: observed{reported: true, replicas: 5, ready: 5}},
		"no observedGeneration yet": {item: item(`{"replicas":1,"generation":1}`), synced: true,
			want: observed{reported: true, replicas: 1}},
		"a status without generations (a script's)": {item: item(`{"replicas":2,"availableReplicas":2}`), synced: true,
			want: observed{reported: true, replicas: 2, ready: 2, current: true}},
		"no status": {item: item(""), synced: true, want: observed{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := observedOf(deployment, tc.item, tc.synced); got != tc.want {
				t.Errorf("observedOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}
