package rebalance

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestBudget(t *testing.T) {
	a, b, c := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}, types.NamespacedName{Name: "c"}
	bg := newBudget(10)
	if !bg.reserve(a, 6) || !bg.reserve(b, 4) {
		t.Fatal("steps within the budget were refused")
	}
	if bg.reserve(c, 1) {
		t.Error("a step past the budget was let through")
	}
	if !bg.reserve(a, 6) {
		t.Error("re-reserving what a step already holds was refused")
	}
	bg.release(a)
	if !bg.reserve(c, 5) || bg.inFlight() != 9 {
		t.Errorf("after a release: in flight %d, want 9", bg.inFlight())
	}
	big := newBudget(3)
	if !big.reserve(a, 7) {
		t.Error("a step larger than the whole budget must run alone")
	}
	if big.reserve(b, 1) {
		t.Error("a second step ran beside an over-budget one")
	}
	big.hold(b, 2) // after a restart, in flight already
	if big.inFlight() != 9 {
		t.Errorf("hold: in flight %d, want 9", big.inFlight())
	}
	if !newBudget(0).reserve(a, 1_000_000) {
		t.Error("an unlimited budget refused")
	}
}
