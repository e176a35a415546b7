package executor

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestReachedClusters(t *testing.T) {
	r := newReachedClusters()
	key := types.NamespacedName{Namespace: "ns", Name: "web-deployment"}
	other := types.NamespacedName{Namespace: "ns", Name: "db-deployment"}
	status := func(clusters ...string) *workv1alpha2.ResourceBindingStatus {
		st := &workv1alpha2.ResourceBindingStatus{}
		for _, c := range clusters {
			st.AggregatedStatus = append(st.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: c})
		}
		return st
	}
	if got := r.of(key, status()); len(got) != 0 {
		t.Fatalf("nothing remembered: got %v", got)
	}
	r.remember(key, "member3")
	r.remember(key, "member1")
	r.remember(key, "member3") // twice is once
	r.remember(other, "member2")
	if got, want := r.of(key, status()), []string{"member1", "member3"}; !slices.Equal(got, want) {
		t.Errorf("remembered: got %v, want %v", got, want)
	}
	// The status's clusters are added, sorted, without duplicates.
	if got, want := r.of(key, status("member2", "member1")), []string{"member1", "member2", "member3"}; !slices.Equal(got, want) {
		t.Errorf("with the status: got %v, want %v", got, want)
	}
	// The result is the caller's: changing it changes nothing remembered.
	got := r.of(key, status())
	got[0] = "changed"
	if again := r.of(key, status()); again[0] != "member1" {
		t.Errorf("the caller's slice is shared with the record: %v", again)
	}
	r.forget(key, "member1")
	r.forget(key, "member9") // not remembered: nothing happens
	if got, want := r.of(key, status()), []string{"member3"}; !slices.Equal(got, want) {
		t.Errorf("after forget: got %v, want %v", got, want)
	}
	r.forget(key, "member3")
	if _, ok := r.applied[key]; ok {
		t.Error("a binding with no cluster left keeps an entry")
	}
	r.drop(other)
	if got := r.of(other, status()); len(got) != 0 {
		t.Errorf("dropped binding: got %v", got)
	}
}

func TestStatusWritesForgetExpiredWrites(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	w := newStatusWrites(clk, 3*time.Second)
	key := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("b-", i)}
	}
	w.written(key(0))
	if got := w.wait(key(0)); got != 3*time.Second {
		t.Errorf("wait right after a write = %v, want the whole interval", got)
	}
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if got := w.wait(key(0)); got != time.Second {
		t.Errorf("wait 2s after a write = %v, want 1s", got)
	}
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if got := w.wait(key(0)); got != 0 {
		t.Errorf("wait after the interval = %v, want 0", got)
	}
	// A burst of writes, then the interval passes: the next writes sweep
	// the expired ones instead of keeping one entry per binding for good.
	for i := range 10000 {
		w.written(key(i))
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	w.written(key(100000))
	if n := w.last.Len(); n != 1 {
		t.Errorf("%d writes remembered, only the one of the last interval expected", n)
	}
	if got := w.wait(key(100000)); got != 3*time.Second {
		t.Errorf("a write of this interval was forgotten (wait %v)", got)
	}
}
