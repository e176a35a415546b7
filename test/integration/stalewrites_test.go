package integration

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
	"github.com/atoll-dev/atoll/test/framework"
)

// countingTransport counts the writes (PUT and PATCH) that reach the API
// server.
type countingTransport struct {
	next   http.RoundTripper
	writes atomic.Int32
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut || req.Method == http.MethodPatch {
		c.writes.Add(1)
	}
	return c.next.RoundTrip(req)
}

// unchangedWrites is the guard's count of writes of controller that the API
// server accepted without a change (this process's metrics registry).
func unchangedWrites(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "atoll_controller_unchanged_writes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// guardedClient is a client guarded by versions, with the count of the
// writes it sent.
func guardedClient(t *testing.T, versions *stalewrites.Versions) (client.Client, *countingTransport) {
	t.Helper()
	counter := &countingTransport{}
	cfg := shared.RESTConfig(t)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		counter.next = rt
		return counter
	})
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return stalewrites.Guard(c, versions, "test"), counter
}

// TestStaleWritesAreNotSent writes through a guarded client with copies of
// an object taken before the client's own write, as a controller whose
// cache has not caught up does: conditional writes guarded by the replaced
// version are answered 409 without a request, everything else is sent as
// before.
func TestStaleWritesAreNotSent(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	plain := shared.Client(t)
	versions := stalewrites.New(nil)
	c, sent := guardedClient(t, versions)

	// A namespace of its own: no policy claims the ConfigMap, so nothing
	// else writes it meanwhile.
	framework.CreateNamespace(t, plain, "stale-writes")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "stale-writes"}, Data: map[string]string{"a": "1"}}
	framework.CreateAndCleanup(t, plain, cm)
	old := cm.DeepCopy() // what a lagging cache still shows

	// write checks the requests do sends, and that only a write that
	// changed nothing counts as one.
	write := func(what string, wantSent int32, do func() error) error {
		t.Helper()
		before, unchangedBefore := sent.writes.Load(), unchangedWrites(t, "test")
		err := do()
		if got := sent.writes.Load() - before; got != wantSent {
			t.Errorf("%s: %d requests sent, want %d (err %v)", what, got, wantSent, err)
		}
		wantUnchanged := 0.0
		if what == "patch that changes nothing" {
			wantUnchanged = 1
		}
		if got := unchangedWrites(t, "test") - unchangedBefore; got != wantUnchanged {
			t.Errorf("%s: counted as %v writes that changed nothing, want %v", what, got, wantUnchanged)
		}
		return err
	}

	// The process's own write replaces old's version.
	mine := old.DeepCopy()
	mine.Data["a"] = "2"
	if err := write("update", 1, func() error { return c.Update(ctx, mine) }); err != nil {
		t.Fatal(err)
	}

	staleCases := map[string]func() error{
		"patch with an optimistic lock": func() error {
			o := old.DeepCopy()
			o.Data["b"] = "x"
			return c.Patch(ctx, o, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}))
		},
		"update": func() error {
			o := old.DeepCopy()
			o.Data["b"] = "x"
			return c.Update(ctx, o)
		},
	}
	for name, do := range staleCases {
		err := write(name, 0, do)
		if !stalewrites.IsStale(err) || !apierrors.IsConflict(err) {
			t.Errorf("%s from the replaced version: err %v, want the guard's conflict", name, err)
		}
	}

	// A patch without a lock does not depend on the version: sent.
	o := old.DeepCopy()
	o.Data["c"] = "y"
	if err := write("patch without a lock", 1, func() error { return c.Patch(ctx, o, client.MergeFrom(old)) }); err != nil {
		t.Errorf("patch without a lock: %v", err)
	}

	// A locked patch that changes nothing keeps the version: the version
	// is not replaced, and the next locked write from it is sent.
	current := &corev1.ConfigMap{}
	if err := plain.Get(ctx, client.ObjectKeyFromObject(cm), current); err != nil {
		t.Fatal(err)
	}
	same := current.DeepCopy()
	if err := write("patch that changes nothing", 1, func() error {
		return c.Patch(ctx, same, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}))
	}); err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != current.ResourceVersion {
		t.Fatalf("a patch changing nothing moved the version %s → %s", current.ResourceVersion, same.ResourceVersion)
	}
	changed := current.DeepCopy()
	changed.Data["d"] = "z"
	if err := write("patch from an unreplaced version", 1, func() error {
		return c.Patch(ctx, changed, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}))
	}); err != nil {
		t.Errorf("patch from an unreplaced version: %v", err)
	}

	// Another process knows nothing of these writes: its stale write goes
	// out and the API server refuses it.
	other, otherSent := guardedClient(t, stalewrites.New(nil))
	o = old.DeepCopy()
	o.Data["e"] = "w"
	err := other.Patch(ctx, o, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}))
	if !apierrors.IsConflict(err) || stalewrites.IsStale(err) || otherSent.writes.Load() != 1 {
		t.Errorf("another process's stale patch: err %v after %d requests, want the API server's conflict", err, otherSent.writes.Load())
	}
}

// TestStaleStatusWritesAreNotSent is the same for a status subresource
// (the scheduler and the executor write binding statuses in turn), on a
// Deployment no policy claims, so that nothing else writes it meanwhile.
func TestStaleStatusWritesAreNotSent(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	plain := shared.Client(t)
	c, sent := guardedClient(t, stalewrites.New(nil))

	framework.CreateNamespace(t, plain, "stale-status")
	d := framework.Deployment("web", "stale-status").Obj()
	framework.CreateAndCleanup(t, plain, d)
	old := d.DeepCopy()

	mine := old.DeepCopy()
	mine.Status.ObservedGeneration = 1
	if err := c.Status().Patch(ctx, mine, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		t.Fatal(err)
	}
	theirs := old.DeepCopy()
	theirs.Status.Replicas = 1
	err := c.Status().Patch(ctx, theirs, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{}))
	if !stalewrites.IsStale(err) {
		t.Errorf("status patch from the replaced version: err %v, want the guard's conflict", err)
	}
	if n := sent.writes.Load(); n != 1 {
		t.Errorf("%d status writes sent, want only the first", n)
	}
}
