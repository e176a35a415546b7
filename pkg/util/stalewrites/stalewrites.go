// Package stalewrites keeps a controller from sending a conditional write
// that is sure to lose: one guarded by a resourceVersion that a write of
// this process has already replaced.
//
// After a controller writes an object, its informer cache shows the old
// version until the watch delivers the new one: milliseconds on an idle
// control plane, seconds in a burst (a 5,000-template burst on this
// 2-core machine showed 3.6–12 s). A reconcile in that gap, by the same
// controller or another one sharing the cache, computes its write from the
// old version; guarded by that resourceVersion (an update, or a patch with
// an optimistic lock) the API server decodes, patches and validates the
// object and then answers 409. A resourceVersion names one version of one
// object, and a replaced version never comes back, so the answer is known
// before the request: the guard answers the 409 itself, and the caller
// retries as after any lost race, once its cache has caught up.
package stalewrites

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/atoll-dev/atoll/pkg/util/expiring"
)

// MaxCacheLag is how long a replaced version is remembered, which bounds
// the record's size. Nothing is lost by a long one: a write guarded by a
// replaced version loses whenever it is sent, so holding it back never
// delays a write that could succeed. A 5,000-template burst sharing the
// machine with a larger one showed caches 12 s behind their own writes.
const MaxCacheLag = time.Minute

// Retry is how soon a caller whose write was not sent should look again:
// the cache is seconds behind when this happens, so retrying at a lost
// race's pace would mostly re-run the reconcile for nothing.
const Retry = 500 * time.Millisecond

var (
	notSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_controller_stale_writes_total",
		Help: "Conditional writes a controller did not send because its cache still showed a version this process had already replaced (each would have been a 409).",
	}, []string{"controller"})
	unchanged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "atoll_controller_unchanged_writes_total",
		Help: "Updates and patches a controller sent that the API server accepted without changing the object (its resourceVersion stayed): " +
			"requests a level-based controller should not send.",
	}, []string{"controller"})
)

func init() { metrics.Registry.MustRegister(notSent, unchanged) }

// Versions remembers, for MaxCacheLag, the object versions this process's
// writes replaced. One Versions serves every controller of a process:
// they share one cache, and a version one of them replaced is stale for
// all of them.
type Versions struct {
	replaced *expiring.Times[version]
}

type version struct {
	uid types.UID
	rv  string
}

// New returns an empty Versions on clock c (nil: the real clock).
func New(c clock.PassiveClock) *Versions {
	return &Versions{replaced: expiring.New[version](c, MaxCacheLag)}
}

// Replaced records that a write replaced version rv of the object uid.
func (v *Versions) Replaced(uid types.UID, rv string) {
	if uid == "" || rv == "" {
		return
	}
	v.replaced.Record(version{uid, rv})
}

// Stale reports whether version rv of the object uid was replaced by a
// write of this process less than MaxCacheLag ago.
func (v *Versions) Stale(uid types.UID, rv string) bool {
	if uid == "" || rv == "" {
		return false
	}
	_, ok := v.replaced.Since(version{uid, rv})
	return ok
}

// staleError is the 409 the guard answers for the API server.
type staleError struct{ *apierrors.StatusError }

func (e staleError) Unwrap() error { return e.StatusError }

// IsStale reports whether err is the guard's answer (a conflict; nothing
// was sent).
func IsStale(err error) bool {
	var s staleError
	return errors.As(err, &s)
}

// Guard returns c for controller: conditional updates and patches of an
// object whose resourceVersion v says was replaced are answered with a 409
// without a request (IsStale tells it apart; apierrors.IsConflict holds
// too), and every successful update or patch records the version it
// replaced. One that kept the object's version changed nothing, which the
// API server cannot tell the sender but the version can: it is counted
// (atoll_controller_unchanged_writes_total) and logged at V(1), because a
// controller that compares before it writes sends none (a restart in the
// e2e tests asserts it).
func Guard(c client.WithWatch, v *Versions, controller string) client.WithWatch {
	g := &guard{versions: v, controller: controller, notSent: notSent.WithLabelValues(controller), unchanged: unchanged.WithLabelValues(controller)}
	return interceptor.NewClient(c, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return g.write(ctx, c, obj, obj.GetResourceVersion() != "", func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			raw, conditional, err := g.raw(obj, patch)
			if err != nil {
				return err
			}
			return g.write(ctx, c, obj, conditional, func() error { return c.Patch(ctx, obj, raw, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return g.write(ctx, c, obj, obj.GetResourceVersion() != "", func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			raw, conditional, err := g.raw(obj, patch)
			if err != nil {
				return err
			}
			return g.write(ctx, c, obj, conditional, func() error { return c.SubResource(sub).Patch(ctx, obj, raw, opts...) })
		},
	})
}

type guard struct {
	versions   *Versions
	controller string
	notSent    prometheus.Counter
	unchanged  prometheus.Counter
}

// raw computes patch's body once (the client would otherwise compute it
// again) and reports whether it is conditional on obj's resourceVersion:
// an optimistic lock puts it in the body.
func (g *guard) raw(obj client.Object, patch client.Patch) (client.Patch, bool, error) {
	data, err := patch.Data(obj)
	if err != nil {
		return nil, false, err
	}
	rv := obj.GetResourceVersion()
	conditional := rv != "" && bytes.Contains(data, []byte(`"resourceVersion":"`+rv+`"`))
	return client.RawPatch(patch.Type(), data), conditional, nil
}

// write sends a write of obj unless it is conditional on a replaced
// version, and records the version a successful write replaced. A write
// that changed nothing keeps the version, which is then not replaced.
func (g *guard) write(ctx context.Context, c client.Client, obj client.Object, conditional bool, send func() error) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	if conditional && g.versions.Stale(uid, rv) {
		g.notSent.Inc()
		// Typed objects from the cache carry no kind; the scheme has it.
		gvk, _ := c.GroupVersionKindFor(obj)
		return staleError{apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName(),
			errors.New("this process already replaced the version its cache shows; not sent"))}
	}
	if err := send(); err != nil {
		return err
	}
	switch after := obj.GetResourceVersion(); {
	case after != rv:
		g.versions.Replaced(uid, rv)
	case rv != "":
		g.unchanged.Inc()
		gvk, _ := c.GroupVersionKindFor(obj)
		klog.FromContext(ctx).V(1).Info("Write changed nothing", "controller", g.controller, "kind", gvk.Kind, "object", klog.KObj(obj))
	}
	return nil
}
