package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// These tests drive the Lease rounds by hand on a fake clock; the e2e test
// (test/e2e/shards) runs the real processes against a real API server.

func newStore(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).Build()
}

func newProcess(c client.Client, clk *clocktesting.FakeClock, name string, shards int) *Leases {
	l := &Leases{Owner: NewOwner(shards), Client: c, Reader: c, Namespace: "atoll-system",
		Group: "atoll-controller-manager", Identity: name, Clock: clk}
	l.init()
	return l
}

// round runs one step of each live process, then lets drained shards go,
// as Start's loop does.
func round(t *testing.T, ps ...*Leases) {
	t.Helper()
	for _, p := range ps {
		if err := p.step(context.Background()); err != nil {
			t.Fatalf("%s: %v", p.Identity, err)
		}
	}
	for _, p := range ps {
		for len(p.draining) > 0 {
			select {
			case s := <-p.drained:
				p.release(context.Background(), s)
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: shards %v never drained", p.Identity, p.draining)
			}
		}
	}
}

func heldBy(t *testing.T, c client.Client, shards int) []string {
	t.Helper()
	out := make([]string, shards)
	for s := range shards {
		var le coordinationv1.Lease
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "atoll-system", Name: ShardLeaseName("atoll-controller-manager", s)}, &le); err == nil {
			out[s] = holder(&le)
		}
	}
	return out
}

func TestLeasesSplitAndTakeOver(t *testing.T) {
	c := newStore(t)
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	a := newProcess(c, clk, "a", 4)
	round(t, a)
	if diff := cmp.Diff([]string{"a", "a", "a", "a"}, heldBy(t, c, 4)); diff != "" {
		t.Fatalf("alone, a holds every shard (-want +got):\n%s", diff)
	}
	if got := a.Owner.heldShards(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("a's owner holds %v, want all four", got)
	}

	b := newProcess(c, clk, "b", 4)
	for range 3 {
		clk.Step(2 * time.Second)
		round(t, b, a)
	}
	if diff := cmp.Diff([]string{"a", "a", "b", "b"}, heldBy(t, c, 4)); diff != "" {
		t.Fatalf("with b present, a hands its highest shards back (-want +got):\n%s", diff)
	}
	if a.Owner.Holds(2) || !b.Owner.Holds(2) {
		t.Fatalf("shard 2: a holds %v, b holds %v; want b only", a.Owner.Holds(2), b.Owner.Holds(2))
	}

	// a dies. b saw a's last renewal only at its next round (now, 10s
	// later): the Lease duration counts from there, on b's clock.
	clk.Step(10 * time.Second)
	round(t, b)
	clk.Step(14 * time.Second)
	round(t, b)
	if got := heldBy(t, c, 4); got[0] != "a" {
		t.Fatalf("14s after b last saw a's Leases change, shard 0 moved already: %v", got)
	}
	clk.Step(2 * time.Second)
	round(t, b)
	if diff := cmp.Diff([]string{"b", "b", "b", "b"}, heldBy(t, c, 4)); diff != "" {
		t.Fatalf("once a's Leases expired, b takes its shards (-want +got):\n%s", diff)
	}
}

func TestLeasesLostShardStopsTheProcess(t *testing.T) {
	c := newStore(t)
	clk := clocktesting.NewFakeClock(time.Now())
	a := newProcess(c, clk, "a", 2)
	round(t, a)
	// Someone else writes the Lease (an operator, or a process that
	// wrongly judged it expired).
	var le coordinationv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "atoll-system", Name: ShardLeaseName("atoll-controller-manager", 1)}, &le); err != nil {
		t.Fatal(err)
	}
	le.Spec.HolderIdentity = ptr("intruder")
	if err := c.Update(context.Background(), &le); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Second)
	err := a.step(context.Background())
	if err == nil || !strings.Contains(err.Error(), `held by "intruder"`) {
		t.Fatalf("step after losing shard 1 = %v, want an error naming the new holder", err)
	}
}

func TestLeasesRefuseADifferentShardCount(t *testing.T) {
	c := newStore(t)
	clk := clocktesting.NewFakeClock(time.Now())
	a := newProcess(c, clk, "a", 2)
	round(t, a)
	b := newProcess(c, clk, "b", 3)
	err := b.step(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--shards 2") {
		t.Fatalf("b with --shards 3 beside a with --shards 2: step = %v, want a refusal naming both counts", err)
	}
}

func TestFairShare(t *testing.T) {
	cases := map[string]struct{ shards, processes, want int }{
		"one process takes all":    {shards: 4, processes: 1, want: 4},
		"even split":               {shards: 4, processes: 2, want: 2},
		"uneven split rounds up":   {shards: 5, processes: 2, want: 3},
		"more processes than work": {shards: 2, processes: 5, want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := fairShare(tc.shards, tc.processes); got != tc.want {
				t.Errorf("fairShare(%d, %d) = %d, want %d", tc.shards, tc.processes, got, tc.want)
			}
		})
	}
}

func TestOfIsStableAndSpread(t *testing.T) {
	// The hash must never change: processes of different versions share
	// the split during a rolling upgrade.
	if got := Of("default", "web-deployment", 4); got != Of("default", "web-deployment", 4) {
		t.Fatal("Of is not deterministic")
	}
	counts := make([]int, 4)
	for i := range 4000 {
		counts[Of("ns", fmt.Sprintf("app-%d-deployment", i), 4)]++
	}
	for s, n := range counts {
		if n < 800 || n > 1200 {
			t.Errorf("shard %d got %d of 4000 keys; want a spread within 20%% of 1000: %v", s, n, counts)
		}
	}
	if Of("a", "b", 1) != 0 || Of("a", "b", 0) != 0 {
		t.Error("one shard (or none configured) is shard 0")
	}
}

func TestOwnerDropWaitsForWorkInFlight(t *testing.T) {
	o := NewOwner(2)
	s := o.Of("ns", "x")
	o.gain(s)
	leave, ok := o.Enter("ns", "x")
	if !ok {
		t.Fatal("Enter on a held shard refused")
	}
	o.drop(s)
	if _, ok := o.Enter("ns", "x"); ok {
		t.Fatal("Enter after drop accepted new work")
	}
	waited := make(chan struct{})
	go func() { o.wait(s); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned while work was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	leave()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return after the work left")
	}
}

func TestUnshardedOwnerHoldsEverything(t *testing.T) {
	for name, o := range map[string]*Owner{"nil": nil, "one shard": NewOwner(1)} {
		t.Run(name, func(t *testing.T) {
			if o.Sharded() {
				t.Error("Sharded() = true")
			}
			if _, ok := o.Enter("ns", "anything"); !ok {
				t.Error("Enter refused")
			}
			if !o.Owns("ns", "anything") {
				t.Error("Owns = false")
			}
		})
	}
}
