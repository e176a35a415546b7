package stalewrites

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestStale(t *testing.T) {
	start := time.Unix(1000, 0)
	cases := map[string]struct {
		uid   types.UID
		rv    string
		after time.Duration
		want  bool
	}{
		"the version the write replaced":      {uid: "a", rv: "10", want: true},
		"still within the cache's lag":        {uid: "a", rv: "10", after: MaxCacheLag - time.Second, want: true},
		"past the lag the cache is believed":  {uid: "a", rv: "10", after: MaxCacheLag},
		"the write's own version, or a later": {uid: "a", rv: "11"},
		"another object at the same number":   {uid: "b", rv: "10"},
		"an object without a version":         {uid: "a"},
		"an object without a uid":             {rv: "10"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			v := New(clk)
			v.Replaced("a", "10")
			v.Replaced("", "10") // not recorded: nothing could match it
			clk.SetTime(start.Add(c.after))
			if got := v.Stale(c.uid, c.rv); got != c.want {
				t.Errorf("Stale(%q, %q) %v after the write = %v, want %v", c.uid, c.rv, c.after, got, c.want)
			}
		})
	}
}

// TestVersionsForget checks that the record holds the writes of about the
// last two MaxCacheLag windows, not every write ever made.
func TestVersionsForget(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	v := New(clk)
	for i := range 10000 {
		v.Replaced(types.UID(fmt.Sprint(i)), "1")
	}
	clk.SetTime(clk.Now().Add(MaxCacheLag))
	v.Replaced("last", "1")
	if n := v.replaced.Len(); n != 1 {
		t.Errorf("%d versions remembered, only the last window's one expected", n)
	}
	if !v.Stale("last", "1") {
		t.Error("the last window's write was forgotten")
	}
}
