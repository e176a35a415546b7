package rebalance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func dist(kv ...any) Distribution {
	d := Distribution{}
	for i := 0; i < len(kv); i += 2 {
		d[kv[i].(string)] = int32(kv[i+1].(int))
	}
	return d
}

func TestPlan(t *testing.T) {
	cases := map[string]struct {
		cur, final Distribution
		batch      int32
		want       []Distribution
	}{
		"1:1 to 1:3 in one step": {
			cur: dist("a", 6, "b", 6), final: dist("a", 3, "b", 9), batch: 3,
			want: []Distribution{dist("a", 3, "b", 9)},
		},
		"12 replicas 1:1 to 1:2, one replica a step": {
			cur: dist("a", 6, "b", 6), final: dist("a", 4, "b", 8), batch: 1,
			want: []Distribution{dist("a", 5, "b", 7), dist("a", 4, "b", 8)},
		},
		"a cluster leaves": {
			cur: dist("a", 4, "b", 4), final: dist("b", 8), batch: 3,
			want: []Distribution{dist("a", 1, "b", 7), dist("b", 8)},
		},
		"a cluster joins; the third is left alone": {
			cur: dist("a", 5, "c", 5), final: dist("a", 3, "b", 2, "c", 5), batch: 1,
			want: []Distribution{dist("a", 4, "b", 1, "c", 5), dist("a", 3, "b", 2, "c", 5)},
		},
		"growth rides along": {
			cur: dist("a", 6, "b", 6), final: dist("a", 3, "b", 12), batch: 3,
			want: []Distribution{dist("a", 3, "b", 9), dist("a", 3, "b", 12)},
		},
		"shrink goes with the first step": {
			cur: dist("a", 6, "b", 6), final: dist("a", 2, "b", 8), batch: 2,
			want: []Distribution{dist("a", 2, "b", 8)},
		},
		"two sources, two targets, proportional": {
			cur: dist("a", 6, "b", 2, "c", 0, "d", 4), final: dist("a", 2, "b", 0, "c", 6, "d", 4), batch: 4,
			want: []Distribution{dist("a", 3, "b", 1, "c", 4, "d", 4), dist("a", 2, "c", 6, "d", 4)},
		},
		"nothing to do": {cur: dist("a", 2), final: dist("a", 2), batch: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Plan(tc.cur, tc.final, tc.batch)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b Distribution) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsMove(t *testing.T) {
	cases := map[string]struct {
		cur, next Distribution
		want      bool
	}{
		"weights change":      {dist("a", 6, "b", 6), dist("a", 3, "b", 9), true},
		"scale up":            {dist("a", 6, "b", 6), dist("a", 7, "b", 7), false},
		"scale down":          {dist("a", 6, "b", 6), dist("a", 5, "b", 6), false},
		"first placement":     {dist(), dist("a", 3), false},
		"cluster leaves":      {dist("a", 3, "b", 3), dist("b", 6), true},
		"cluster joins, grow": {dist("a", 3), dist("a", 3, "b", 3), false},
		"unchanged":           {dist("a", 3), dist("a", 3), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsMove(tc.cur, tc.next); got != tc.want {
				t.Errorf("IsMove = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	cases := map[string]struct {
		surge    *intstr.IntOrString
		minBatch *int32
		total    int32
		want     int32
		wantErr  bool
	}{
		"default 25% rounds up": {total: 10, want: 3},
		"integer":               {surge: ptr.To(intstr.FromInt32(5)), total: 10, want: 5},
		"min batch wins":        {surge: ptr.To(intstr.FromString("10%")), minBatch: ptr.To[int32](4), total: 10, want: 4},
		"at least one":          {total: 0, want: 1},
		"zero is refused":       {surge: ptr.To(intstr.FromInt32(0)), total: 10, wantErr: true},
		"negative is refused":   {surge: ptr.To(intstr.FromInt32(-2)), total: 10, wantErr: true},
		"garbage is refused":    {surge: ptr.To(intstr.FromString("many")), total: 10, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Batch(tc.surge, tc.minBatch, tc.total)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Batch = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestHPABounds(t *testing.T) {
	cases := map[string]struct {
		workload Distribution
		min, max int32
		limits   Limits
		want     map[string]Bounds
	}{
		"split by weight, min at least 1": {
			workload: dist("a", 3, "b", 9), min: 2, max: 20,
			want: map[string]Bounds{"a": {1, 5}, "b": {1, 15}},
		},
		"target floor and source cap": {
			workload: dist("a", 3, "b", 9), min: 2, max: 20, limits: Limits{"b": {Min: 9}, "a": {Max: 3}},
			want: map[string]Bounds{"a": {1, 3}, "b": {9, 15}},
		},
		"floor above the split max raises max": {
			workload: dist("a", 1, "b", 1), min: 1, max: 4, limits: Limits{"b": {Min: 5}},
			want: map[string]Bounds{"a": {1, 2}, "b": {5, 5}},
		},
		"cap of 0 stays 1": {
			workload: dist("a", 1, "b", 1), min: 2, max: 4, limits: Limits{"a": {Max: -1}},
			want: map[string]Bounds{"a": {1, 2}, "b": {1, 2}},
		},
		"no replicas anywhere": {workload: dist(), min: 1, max: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := HPABounds(tc.workload, tc.min, tc.max, tc.limits)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HPABounds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimitsRoundTrip(t *testing.T) {
	l := Limits{"a": {Max: 3}, "b": {Min: 9}}
	got, err := ParseLimits(l.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := ParseLimits("{"); err == nil {
		t.Error("ParseLimits accepted broken JSON")
	}
}

// FuzzPlan: every plan ends at final; each cluster moves only toward
// final (no reversal); no step's total drops below the smaller of the two
// totals (the capacity floor); targets never exceed final; a step adds at
// most batch replicas.
func FuzzPlan(f *testing.F) {
	f.Add(uint8(6), uint8(6), uint8(0), uint8(3), uint8(9), uint8(0), uint8(3))
	f.Add(uint8(4), uint8(4), uint8(4), uint8(0), uint8(2), uint8(10), uint8(1))
	f.Add(uint8(10), uint8(0), uint8(1), uint8(0), uint8(9), uint8(1), uint8(7))
	f.Fuzz(func(t *testing.T, c1, c2, c3, f1, f2, f3, batch uint8) {
		cur := dist("a", int(c1), "b", int(c2), "c", int(c3))
		final := dist("a", int(f1), "b", int(f2), "c", int(f3))
		b := int32(batch%16) + 1
		floor := min(cur.Total(), final.Total())
		prev := cur
		steps := Plan(cur, final, b)
		if len(steps) > 0 && !steps[len(steps)-1].Equal(final) {
			t.Fatalf("plan from %v to %v ends at %v", cur, final, steps[len(steps)-1])
		}
		if !cur.Equal(final) && len(steps) == 0 {
			t.Fatalf("no plan from %v to %v", cur, final)
		}
		for i, s := range steps {
			if s.Total() < floor {
				t.Fatalf("step %d %v: total %d below %d", i, s, s.Total(), floor)
			}
			var added int32
			for _, c := range []string{"a", "b", "c"} {
				if (final[c] >= cur[c] && (s[c] < prev[c] || s[c] > final[c])) ||
					(final[c] < cur[c] && (s[c] > prev[c] || s[c] < final[c])) {
					t.Fatalf("step %d: cluster %s went %d -> %d (from %d toward %d)", i, c, prev[c], s[c], cur[c], final[c])
				}
				added += max(0, s[c]-prev[c])
			}
			if added > b {
				t.Fatalf("step %d added %d replicas, batch %d", i, added, b)
			}
			prev = s
		}
	})
}
