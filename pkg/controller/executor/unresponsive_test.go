package executor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestDidNotAnswer(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"nil":                 {err: nil},
		"client timeout":      {err: &url.Error{Op: "Patch", URL: "https://m", Err: timeoutErr{}}, want: true},
		"connection refused":  {err: fmt.Errorf("applying: %w", &url.Error{Op: "Get", Err: syscall.ECONNREFUSED}), want: true},
		"server timeout":      {err: apierrors.NewTimeoutError("slow", 1), want: true},
		"informer not synced": {err: fmt.Errorf("cluster m: configmaps: %w", errNotSynced), want: true},
		"context cancelled":   {err: context.Canceled},
		"conflict":            {err: apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("changed"))},
		"forbidden":           {err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := didNotAnswer(tc.err); got != tc.want {
				t.Errorf("didNotAnswer(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestUnresponsiveWindow(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	u := newUnresponsive(clk)

	u.observe("m1", apierrors.NewConflict(schema.GroupResource{}, "x", errors.New("x")))
	if why, _ := u.skip("m1"); why != "" {
		t.Fatalf("an answer (conflict) made m1 skipped: %s", why)
	}
	u.observe("m1", timeoutErr{})
	why, left := u.skip("m1")
	if why == "" || left != unresponsiveWindow {
		t.Fatalf("after a timeout: skip %q for %v, want %v", why, left, unresponsiveWindow)
	}
	if why, _ := u.skip("m2"); why != "" {
		t.Errorf("another member skipped: %s", why)
	}
	clk.SetTime(clk.Now().Add(unresponsiveWindow))
	if why, _ := u.skip("m1"); why != "" {
		t.Errorf("m1 still skipped after the window: %s", why)
	}
	u.observe("m1", timeoutErr{})
	u.clear("m1")
	if why, _ := u.skip("m1"); why != "" {
		t.Errorf("m1 skipped after clear: %s", why)
	}
}
