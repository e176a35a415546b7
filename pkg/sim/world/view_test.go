package world

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// report is a member's ReadyReport written age before now.
type report struct {
	age  time.Duration
	apps map[string]int
}

func writeWorld(t *testing.T, dir string, loads simdir.Loads, reports map[string]report, partitioned []string) {
	t.Helper()
	if loads != nil {
		if err := simdir.WriteJSON(simdir.LoadsFile(dir), loads); err != nil {
			t.Fatal(err)
		}
	}
	for member, r := range reports {
		if err := PublishReady(dir, member, r.apps, t0.Add(-r.age)); err != nil {
			t.Fatal(err)
		}
	}
	for _, member := range partitioned {
		if err := simdir.WriteJSON(simdir.FaultFile(dir, member), simdir.Fault{Generation: 1, Partitioned: true}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPodCPU(t *testing.T) {
	web := simdir.Loads{"web": 1200}
	cases := map[string]struct {
		loads       simdir.Loads
		reports     map[string]report
		partitioned []string
		self        string
		app         string
		podReady    bool
		want        int64
	}{
		"even spread over two members": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {age: time.Second, apps: map[string]int{"web": 4, "db": 7}},
			},
			self: "a", app: "web", podReady: true,
			want: 200,
		},
		"the other member sees the same share": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {apps: map[string]int{"web": 4}},
			},
			self: "b", app: "web", podReady: true,
			want: 200,
		},
		"a stale member is excluded": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {age: DefaultStaleAfter + time.Millisecond, apps: map[string]int{"web": 4}},
			},
			self: "a", app: "web", podReady: true,
			want: 600,
		},
		"a report exactly StaleAfter old is fresh": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {age: DefaultStaleAfter, apps: map[string]int{"web": 4}},
			},
			self: "a", app: "web", podReady: true,
			want: 200,
		},
		"a partitioned member is excluded": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {apps: map[string]int{"web": 4}},
			},
			partitioned: []string{"b"},
			self:        "a", app: "web", podReady: true,
			want: 600,
		},
		"a partitioned member gets nothing": {
			loads: web,
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
				"b": {apps: map[string]int{"web": 4}},
			},
			partitioned: []string{"b"},
			self:        "b", app: "web", podReady: true,
			want: 0,
		},
		"self partitioned alone gets nothing": {
			loads:       web,
			reports:     map[string]report{"a": {apps: map[string]int{"web": 2}}},
			partitioned: []string{"a"},
			self:        "a", app: "web", podReady: true,
			want: 0,
		},
		"no load": {
			loads: simdir.Loads{"db": 500},
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 2}},
			},
			self: "a", app: "web", podReady: true,
			want: 0,
		},
		"no loads file": {
			reports: map[string]report{"a": {apps: map[string]int{"web": 2}}},
			self:    "a", app: "web", podReady: true,
			want: 0,
		},
		"a pod that is not Ready uses nothing": {
			loads:   web,
			reports: map[string]report{"a": {apps: map[string]int{"web": 2}}},
			self:    "a", app: "web", podReady: false,
			want: 0,
		},
		"a pod without app uses nothing": {
			loads:   simdir.Loads{"web": 1200},
			reports: map[string]report{"a": {apps: map[string]int{"web": 2}}},
			self:    "a", app: "", podReady: true,
			want: 0,
		},
		"self without a report counts its Ready pod": {
			loads:   web,
			reports: map[string]report{"b": {apps: map[string]int{"web": 2}}},
			self:    "a", app: "web", podReady: true,
			want: 400,
		},
		"self without a report and no other member": {
			loads: web,
			self:  "a", app: "web", podReady: true,
			want: 1200,
		},
		"self whose report lags counts its Ready pod": {
			loads:   web,
			reports: map[string]report{"a": {apps: map[string]int{"web": 0}}},
			self:    "a", app: "web", podReady: true,
			want: 1200,
		},
		"self's own report counts whatever its age": {
			loads: web,
			reports: map[string]report{
				"a": {age: time.Minute, apps: map[string]int{"web": 2}},
				"b": {apps: map[string]int{"web": 2}},
			},
			self: "a", app: "web", podReady: true,
			want: 300,
		},
		"three members, one stale and one partitioned": {
			loads: simdir.Loads{"web": 1000},
			reports: map[string]report{
				"a": {apps: map[string]int{"web": 3}},
				"b": {age: time.Hour, apps: map[string]int{"web": 10}},
				"c": {apps: map[string]int{"web": 10}},
				"d": {apps: map[string]int{"web": 1}},
			},
			partitioned: []string{"c"},
			self:        "a", app: "web", podReady: true,
			want: 250,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeWorld(t, dir, tc.loads, tc.reports, tc.partitioned)
			v := NewView(dir, tc.self, clocktesting.NewFakePassiveClock(t0))
			if diff := cmp.Diff(tc.want, v.PodCPU(tc.app, tc.podReady)); diff != "" {
				t.Errorf("PodCPU(%q, %v) (-want +got):\n%s", tc.app, tc.podReady, diff)
			}
		})
	}
}

func TestViewCachesForTTL(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, simdir.Loads{"web": 1000}, map[string]report{
		"a": {apps: map[string]int{"web": 1}},
		"b": {apps: map[string]int{"web": 1}},
	}, nil)
	clk := clocktesting.NewFakePassiveClock(t0)
	v := NewView(dir, "a", clk)
	if got := v.PodCPU("web", true); got != 500 {
		t.Fatalf("PodCPU = %d, want 500", got)
	}

	if err := SetLoad(dir, "web", 2000); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(t0.Add(DefaultCacheTTL - time.Millisecond))
	if got := v.PodCPU("web", true); got != 500 {
		t.Errorf("within the cache TTL: PodCPU = %d, want the cached 500", got)
	}

	clk.SetTime(t0.Add(DefaultCacheTTL))
	if got := v.PodCPU("web", true); got != 1000 {
		t.Errorf("after the cache TTL: PodCPU = %d, want 1000", got)
	}

	// b's report was written at t0; without a new one it goes stale.
	clk.SetTime(t0.Add(DefaultStaleAfter + time.Second))
	if got := v.PodCPU("web", true); got != 2000 {
		t.Errorf("after b went stale: PodCPU = %d, want 2000", got)
	}
}

func TestViewKeepsLastFaultStateOfUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, simdir.Loads{"web": 1000}, map[string]report{
		"a": {apps: map[string]int{"web": 1}},
		"b": {apps: map[string]int{"web": 1}},
	}, []string{"b"})
	clk := clocktesting.NewFakePassiveClock(t0)
	v := NewView(dir, "a", clk)
	if got := v.PodCPU("web", true); got != 1000 {
		t.Fatalf("PodCPU = %d, want 1000", got)
	}
	if err := writeRaw(simdir.FaultFile(dir, "b"), "{not json"); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(t0.Add(time.Second))
	if got := v.PodCPU("web", true); got != 1000 {
		t.Errorf("with b's fault file unreadable: PodCPU = %d, want 1000 (b still partitioned)", got)
	}
}
