package baseline

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// chain builds the input of components a → b → c (c depends on b, b on
// a) on cluster m1, all active with one binding each, with the given
// observations.
func chain(t *testing.T, on map[string]observed) input {
	t.Helper()
	g, err := baseline.GraphFromDeps([]string{"a", "b", "c"}, map[string][]string{"b": {"a"}, "c": {"b"}})
	if err != nil {
		t.Fatal(err)
	}
	in := input{graph: g, components: map[string]*component{}, matching: map[string]bool{"m1": true}, clusters: []string{"m1"},
		previous: map[string]appsv1alpha1.BaselineClusterStatus{}, now: t0}
	for _, n := range []string{"a", "b", "c"} {
		in.components[n] = &component{name: n, active: true, gates: true, timeout: time.Minute, bindings: 1, on: map[string]observed{"m1": on[n]}}
	}
	return in
}

func stateOf(out output, cluster, name string) appsv1alpha1.ComponentStatus {
	for _, cs := range out.status {
		if cs.Name != cluster {
			continue
		}
		for _, c := range cs.Components {
			if c.Name == name {
				return c
			}
		}
	}
	return appsv1alpha1.ComponentStatus{}
}

func TestPlanDispatchesInOrder(t *testing.T) {
	ready := observed{placed: true, present: true, ready: true}
	applying := observed{placed: true, present: true, message: "Deployment d: not ready"}
	for name, tc := range map[string]struct {
		on        map[string]observed
		place     map[string]bool
		allow     map[string]bool
		states    map[string]appsv1alpha1.ComponentState
		messageOf map[string]string
	}{
		"nothing yet: only the root goes": {
			on:        map[string]observed{},
			place:     map[string]bool{"a": true, "b": false, "c": false},
			allow:     map[string]bool{"a": true, "b": false, "c": false},
			states:    map[string]appsv1alpha1.ComponentState{"a": "Applying", "b": "Waiting", "c": "Waiting"},
			messageOf: map[string]string{"b": "Waiting for a", "c": "Waiting for b"},
		},
		"root ready: the next goes": {
			on:     map[string]observed{"a": ready},
			place:  map[string]bool{"a": true, "b": true, "c": false},
			allow:  map[string]bool{"a": true, "b": true, "c": false},
			states: map[string]appsv1alpha1.ComponentState{"a": "Ready", "b": "Applying", "c": "Waiting"},
		},
		"a prerequisite no longer ready: the dependent stays, its changes wait": {
			on:        map[string]observed{"a": applying, "b": {placed: true, present: true, held: true}},
			place:     map[string]bool{"a": true, "b": true, "c": false},
			allow:     map[string]bool{"a": true, "b": false, "c": false},
			states:    map[string]appsv1alpha1.ComponentState{"a": "Applying", "b": "Waiting", "c": "Waiting"},
			messageOf: map[string]string{"b": "Waiting for a before the new version rolls out"},
		},
		"a failed prerequisite blocks its dependents": {
			on:        map[string]observed{"a": ready, "b": {placed: true, present: true, failed: "Deployment d: ProgressDeadlineExceeded"}},
			place:     map[string]bool{"a": true, "b": true, "c": false},
			states:    map[string]appsv1alpha1.ComponentState{"a": "Ready", "b": "Failed", "c": "Waiting"},
			messageOf: map[string]string{"b": "Deployment d: ProgressDeadlineExceeded", "c": "Waiting for b"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			out := plan(chain(t, tc.on))
			for n, want := range tc.place {
				if got := out.decisions[n]["m1"].place; got != want {
					t.Errorf("%s placed = %v, want %v", n, got, want)
				}
			}
			for n, want := range tc.allow {
				if got := out.decisions[n]["m1"].allow; got != want {
					t.Errorf("%s allowed = %v, want %v", n, got, want)
				}
			}
			for n, want := range tc.states {
				if got := stateOf(out, "m1", n); got.State != want {
					t.Errorf("%s state = %s (%s), want %s", n, got.State, got.Message, want)
				}
			}
			for n, want := range tc.messageOf {
				if got := stateOf(out, "m1", n).Message; got != want {
					t.Errorf("%s message = %q, want %q", n, got, want)
				}
			}
		})
	}
}

func TestPlanWithdrawsInReverseOrder(t *testing.T) {
	present := observed{placed: true, present: true, ready: true}
	in := chain(t, map[string]observed{"a": present, "b": present, "c": {present: true}}) // c: withdrawal pending
	for _, c := range in.components {
		c.active = false
	}
	out := plan(in)
	if out.decisions["c"]["m1"].place || !out.decisions["b"]["m1"].place || !out.decisions["a"]["m1"].place {
		t.Errorf("while c is still present, b and a stay: %+v", out.decisions)
	}
	if got := stateOf(out, "m1", "b").Message; got != "Waiting for c to be withdrawn first" {
		t.Errorf("b's message = %q", got)
	}
	in = chain(t, map[string]observed{"a": present, "b": present})
	for _, c := range in.components {
		c.active = false
	}
	out = plan(in)
	if out.decisions["b"]["m1"].place || !out.decisions["a"]["m1"].place {
		t.Errorf("once c is gone, b goes and a waits for b: %+v", out.decisions)
	}
	// A component holding data is never removed from a cluster: it is
	// released once its dependents are gone.
	in = chain(t, map[string]observed{"a": present})
	for _, c := range in.components {
		c.active = false
	}
	in.components["a"].keepsData = true
	out = plan(in)
	if !out.decisions["a"]["m1"].place || !strings.HasPrefix(stateOf(out, "m1", "a").Message, "kept: it holds data") {
		t.Errorf("a data-holding component stays placed: %+v %+v", out.decisions["a"], stateOf(out, "m1", "a"))
	}
}

func TestPlanTimeoutAndReadiness(t *testing.T) {
	in := chain(t, map[string]observed{"a": {placed: true, present: true, message: "Deployment d: 0 of 1 available"}})
	in.previous["m1"] = appsv1alpha1.BaselineClusterStatus{Name: "m1", Components: []appsv1alpha1.ComponentStatus{
		{Name: "a", State: appsv1alpha1.ComponentApplying, Since: &metav1.Time{Time: t0.Add(-40 * time.Second)}},
	}}
	out := plan(in)
	if out.requeue != 20*time.Second {
		t.Errorf("requeue = %s, want the 20s left of a's timeout", out.requeue)
	}
	in.now = t0.Add(30 * time.Second)
	out = plan(in)
	st := stateOf(out, "m1", "a")
	if st.State != appsv1alpha1.ComponentFailed || st.Message != "not ready within 1m0s: Deployment d: 0 of 1 available" {
		t.Errorf("after its timeout a is %s %q", st.State, st.Message)
	}
	// It stays Failed (not back to Applying) on the next plan.
	in.previous["m1"] = out.status[0]
	in.now = t0.Add(40 * time.Second)
	if st := stateOf(plan(in), "m1", "a"); st.State != appsv1alpha1.ComponentFailed {
		t.Errorf("a timed-out component went back to %s", st.State)
	}

	// Every gating component ready: the cluster's baseline is ready; a
	// non-gating component does not hold it.
	ready := observed{placed: true, present: true, ready: true}
	in = chain(t, map[string]observed{"a": ready, "b": ready})
	in.components["c"].gates = false
	out = plan(in)
	if cs := out.status[0]; cs.BaselineReadyTime == nil || cs.Ready != "2/3" {
		t.Errorf("gating components ready: %+v", cs)
	}
	if st := stateOf(out, "m1", "a"); st.ReadyTime == nil || !st.ReadyTime.Time.Equal(t0) {
		t.Errorf("a's readyTime = %v", st.ReadyTime)
	}
}

func TestVersionGeneration(t *testing.T) {
	for name, tc := range map[string]struct {
		annotation string
		rv         string
		generation int64
		want       int64
	}{
		"recorded for this version":     {"12/3", "12", 5, 3},
		"recorded for another version":  {"11/3", "12", 5, 5},
		"not recorded":                  {"", "12", 5, 5},
		"unparsable":                    {"12/x", "12", 5, 5},
		"recorded ahead of the binding": {"12/9", "12", 5, 5},
	} {
		t.Run(name, func(t *testing.T) {
			got := versionGeneration(map[string]string{appsv1alpha1.TemplateVersionAnnotation: tc.annotation}, tc.rv, tc.generation)
			if got != tc.want {
				t.Errorf("versionGeneration = %d, want %d", got, tc.want)
			}
		})
	}
}
