package intern

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestStringSharesOneCopy(t *testing.T) {
	tab := New(10, 16)
	a := tab.String(strings.Clone("propagationpolicy"[:8]))
	b := tab.String(strings.Clone("propagationpolicy"[:8]))
	if a != "propagat" || !same(a, b) {
		t.Errorf("two equal strings interned to different copies: %q %q", a, b)
	}
	if got := tab.String(""); got != "" {
		t.Errorf("empty string: %q", got)
	}
	long := strings.Repeat("x", 17)
	if got := tab.String(long); !same(got, long) || tab.Len() != 1 {
		t.Errorf("a string over the length limit was added (len %d)", tab.Len())
	}
}

func TestTableIsBounded(t *testing.T) {
	tab := New(3, 64)
	for i := range 100 {
		s := fmt.Sprintf("value-%d", i)
		if got := tab.String(s); got != s {
			t.Fatalf("String(%q) = %q", s, got)
		}
	}
	if tab.Len() != 3 {
		t.Errorf("table holds %d strings, limit 3", tab.Len())
	}
	// Strings added before the table filled are still shared.
	first := tab.String("value-0")
	if again := tab.String(strings.Clone("value-0")); !same(first, again) {
		t.Error("a string added before the limit is no longer shared")
	}
}

func TestMap(t *testing.T) {
	tab := New(100, 64)
	if tab.Map(nil, nil) != nil {
		t.Error("nil map did not stay nil")
	}
	m1 := map[string]string{strings.Clone("policy/name"): strings.Clone("all"), strings.Clone("id"): strings.Clone("u-1")}
	m2 := map[string]string{strings.Clone("policy/name"): strings.Clone("all"), strings.Clone("id"): strings.Clone("u-2")}
	onlyPolicy := func(k string) bool { return k == "policy/name" }
	o1, o2 := tab.Map(m1, onlyPolicy), tab.Map(m2, onlyPolicy)
	if len(o1) != 2 || o1["id"] != "u-1" || o2["id"] != "u-2" || o1["policy/name"] != "all" {
		t.Fatalf("maps changed: %v %v", o1, o2)
	}
	if !same(o1["policy/name"], o2["policy/name"]) {
		t.Error("a value chosen for interning was not shared")
	}
	if tab.Len() != 3 { // two keys and "all"; the ids are not interned
		t.Errorf("table holds %d strings, want 3", tab.Len())
	}
	// A map made of the table's copies already (a transform run twice) is
	// returned as it is; one fresh key or chosen value builds a new map.
	if again := tab.Map(o1, onlyPolicy); !sameMap(again, o1) {
		t.Error("a map of interned strings was built again")
	}
	for name, m := range map[string]map[string]string{
		"fresh key":   {strings.Clone("policy/name"): o1["policy/name"], keyOf(o1, "id"): "u-1", strings.Clone("new"): "x"},
		"fresh value": {keyOf(o1, "policy/name"): strings.Clone("all"), keyOf(o1, "id"): "u-1"},
	} {
		if out := tab.Map(m, onlyPolicy); sameMap(out, m) || !maps.Equal(out, m) || !same(out["policy/name"], o1["policy/name"]) {
			t.Errorf("%s: map returned as it is, or changed: %v", name, out)
		}
	}
}

// keyOf is m's own copy of the key equal to k.
func keyOf(m map[string]string, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return k
}

func TestConcurrentUse(t *testing.T) {
	tab := New(50, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s := fmt.Sprintf("k%d", (i+g)%100)
				if got := tab.String(s); got != s {
					t.Errorf("String(%q) = %q", s, got)
					return
				}
			}
		})
	}
	wg.Wait()
	if tab.Len() > 50 {
		t.Errorf("table holds %d strings, limit 50", tab.Len())
	}
}

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestMapsShareEqualMaps(t *testing.T) {
	tab := NewMaps(New(100, 64), 8)
	a := tab.Map(map[string]string{"app": "web", "team": "payments"}, nil)
	b := tab.Map(map[string]string{"team": strings.Clone("payments"), "app": strings.Clone("web")}, nil)
	if !sameMap(a, b) {
		t.Error("two equal maps were not shared")
	}
	c := tab.Map(map[string]string{"app": "web", "team": "search"}, nil)
	if sameMap(a, c) || c["team"] != "search" || a["team"] != "payments" {
		t.Errorf("different maps were mixed: %v %v", a, c)
	}
	if tab.Map(nil, nil) != nil {
		t.Error("nil did not stay nil")
	}
	if empty := tab.Map(map[string]string{}, nil); empty == nil || len(empty) != 0 {
		t.Errorf("empty map became %v", empty)
	}
}

func TestMapsAreBounded(t *testing.T) {
	tab := NewMaps(New(10, 64), 4)
	common := map[string]string{"app": "web"}
	first := tab.Map(common, nil)
	for i := range 1000 {
		m := map[string]string{"app": "web", "id": fmt.Sprint(i)}
		if got := tab.Map(m, nil); !maps.Equal(got, m) {
			t.Fatalf("map %v came back as %v", m, got)
		}
	}
	held := 0
	for _, s := range tab.slots {
		if s != nil {
			held++
		}
	}
	if held > 4 {
		t.Errorf("%d maps held, 4 slots", held)
	}
	// Whether or not a unique map evicted it, a map that repeats is shared
	// again from its next occurrence on.
	again := tab.Map(maps.Clone(common), nil)
	if third := tab.Map(maps.Clone(common), nil); !sameMap(again, third) || !maps.Equal(first, third) {
		t.Error("a repeated map is not shared after unique maps passed")
	}
}

// BenchmarkMapAgain interns a binding's labels that are interned already,
// as the second transform of a streamed list does.
func BenchmarkMapAgain(b *testing.B) {
	tab := New(100, 64)
	m := tab.Map(map[string]string{
		"propagationpolicy.karmada.io/name": "all", "propagationpolicy.karmada.io/namespace": "bench",
		"propagationpolicy.karmada.io/permanent-id": "0d4b1c6e", "resourcebinding.karmada.io/permanent-id": "7f3a9e21",
		"app": "scale", "bench": "scale",
	}, func(k string) bool { return strings.HasSuffix(k, "/name") })
	b.ReportAllocs()
	for b.Loop() {
		tab.Map(m, func(k string) bool { return strings.HasSuffix(k, "/name") })
	}
}
