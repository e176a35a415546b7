package intern

import (
	"fmt"
	"math"
	"sync"
	"testing"
)

type placement struct {
	Clusters []string
	Weights  map[string]int
	Spread   *int
}

func TestValuesShare(t *testing.T) {
	two := 2
	tests := []struct {
		name  string
		a, b  *placement
		share bool
	}{
		{"equal values", &placement{Clusters: []string{"a", "b"}, Spread: &two}, &placement{Clusters: []string{"a", "b"}, Spread: new(2)}, true},
		{"equal maps", &placement{Weights: map[string]int{"a": 1, "b": 2}}, &placement{Weights: map[string]int{"b": 2, "a": 1}}, true},
		{"one cluster more", &placement{Clusters: []string{"a"}}, &placement{Clusters: []string{"a", "b"}}, false},
		{"another pointed-to value", &placement{Spread: &two}, &placement{Spread: new(3)}, false},
		{"an empty slice and none", &placement{Clusters: []string{}}, &placement{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := NewValues[placement](16)
			a := tab.Share(tt.a)
			if a != tt.a {
				t.Fatal("the first value of its kind was not kept as it is")
			}
			b := tab.Share(tt.b)
			if got := b == a; got != tt.share {
				t.Errorf("shared = %v, want %v", got, tt.share)
			}
			if !tt.share && b != tt.b {
				t.Error("a value with no equal came back as another")
			}
		})
	}
	if NewValues[placement](4).Share(nil) != nil {
		t.Error("nil did not stay nil")
	}
}

// A value that does not encode (NaN) is neither shared nor lost.
func TestValuesThatDoNotEncode(t *testing.T) {
	tab := NewValues[struct{ F float64 }](4)
	v := &struct{ F float64 }{math.NaN()}
	if got := tab.Share(v); got != v {
		t.Error("a value that does not encode came back as another")
	}
}

func TestValuesAreBounded(t *testing.T) {
	tab := NewValues[placement](4)
	common := func() *placement { return &placement{Clusters: []string{"member1", "member2"}} }
	for i := range 1000 {
		p := &placement{Clusters: []string{fmt.Sprint(i)}}
		if got := tab.Share(p); got.Clusters[0] != fmt.Sprint(i) {
			t.Fatalf("value %d came back as %v", i, got.Clusters)
		}
	}
	if len(tab.slots) != 4 {
		t.Errorf("%d slots, 4 made", len(tab.slots))
	}
	// Whether or not a unique value evicted it, a value that repeats is
	// shared again from its next occurrence on.
	again := tab.Share(common())
	if tab.Share(common()) != again {
		t.Error("a repeated value is not shared after unique values passed")
	}
}

func TestValuesConcurrentUse(t *testing.T) {
	tab := NewValues[placement](8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				want := fmt.Sprint((g + i) % 20)
				if got := tab.Share(&placement{Clusters: []string{want}}); got.Clusters[0] != want {
					t.Errorf("shared %v for %s", got.Clusters, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
