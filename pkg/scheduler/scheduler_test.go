package scheduler

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestSkipReason(t *testing.T) {
	cases := map[string]struct {
		binding  *utiltesting.BindingWrapper
		wantSkip bool
	}{
		"default":                       {binding: utiltesting.MakeBinding("web", "ns")},
		"default-scheduler":             {binding: utiltesting.MakeBinding("web", "ns").SchedulerName("default-scheduler")},
		"another scheduler":             {binding: utiltesting.MakeBinding("web", "ns").SchedulerName("other"), wantSkip: true},
		"scheduling suspended":          {binding: utiltesting.MakeBinding("web", "ns").SuspendScheduling(true), wantSkip: true},
		"scheduling explicitly resumed": {binding: utiltesting.MakeBinding("web", "ns").SuspendScheduling(false)},
		"attached dependency":           {binding: utiltesting.MakeBinding("cm", "ns").RequiredBy("ns", "web-deployment"), wantSkip: true},
		"required but with a placement": {binding: utiltesting.MakeBinding("cm", "ns").RequiredBy("ns", "web-deployment").Placement(&policyv1alpha1.Placement{})},
		"released":                      {binding: utiltesting.MakeBinding("web", "ns").Annotation(workv1alpha2.ReleasedAnnotation, "2026-12-01T00:00:00Z"), wantSkip: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			if got := skipReason(b, &b.Spec, &b.Status) != ""; got != tc.wantSkip {
				t.Errorf("skip = %v, want %v", got, tc.wantSkip)
			}
		})
	}
}

func TestSameTargets(t *testing.T) {
	tc := func(kv ...any) []workv1alpha2.TargetCluster {
		var out []workv1alpha2.TargetCluster
		for i := 0; i < len(kv); i += 2 {
			out = append(out, workv1alpha2.TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
		}
		return out
	}
	cases := map[string]struct {
		a, b []workv1alpha2.TargetCluster
		want bool
	}{
		"both empty":         {want: true},
		"equal":              {a: tc("m1", 1, "m2", 2), b: tc("m1", 1, "m2", 2), want: true},
		"other order":        {a: tc("m2", 2, "m1", 1), b: tc("m1", 1, "m2", 2), want: true},
		"other replicas":     {a: tc("m1", 1, "m2", 2), b: tc("m1", 2, "m2", 1)},
		"other cluster":      {a: tc("m1", 1), b: tc("m2", 1)},
		"one more":           {a: tc("m1", 1), b: tc("m1", 1, "m2", 1)},
		"empty vs something": {b: tc("m1", 0)},
		"components differ": {
			a: []workv1alpha2.TargetCluster{{Name: "m1", Components: []workv1alpha2.TargetComponent{{Name: "c", Replicas: 1}}}},
			b: tc("m1", 0),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sameTargets(c.a, c.b); got != c.want {
				t.Errorf("sameTargets = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRescheduleRequested(t *testing.T) {
	t0 := metav1.Unix(1000, 0)
	t1 := metav1.Unix(2000, 0)
	cases := map[string]struct {
		triggered, last *metav1.Time
		want            bool
	}{
		"never triggered":         {last: &t0},
		"triggered, never run":    {triggered: &t0, want: true},
		"triggered after the run": {triggered: &t1, last: &t0, want: true},
		"run after the trigger":   {triggered: &t0, last: &t1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := &workv1alpha2.ResourceBindingSpec{RescheduleTriggeredAt: tc.triggered}
			status := &workv1alpha2.ResourceBindingStatus{LastScheduledTime: tc.last}
			if got := rescheduleRequested(spec, status); got != tc.want {
				t.Errorf("rescheduleRequested = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNeedsScheduling(t *testing.T) {
	withStatus := func(b *workv1alpha2.ResourceBinding, observed int64) *workv1alpha2.ResourceBinding {
		b.Status.SchedulerObservedGeneration = observed
		return b
	}
	cases := map[string]struct {
		old, new *workv1alpha2.ResourceBinding
		want     bool
	}{
		"new generation": {
			old:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(1).Obj(), 1),
			new:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Replicas(2).Obj(), 1),
			want: true,
		},
		"only spec.clusters changed (the scheduler's own write)": {
			old: withStatus(utiltesting.MakeBinding("web", "ns").Generation(1).Obj(), 1),
			new: withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).TargetCluster("m1", 1).Obj(), 1),
		},
		"spec.clusters and replicas changed": {
			old:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(1).Obj(), 1),
			new:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Replicas(3).TargetCluster("m1", 1).Obj(), 1),
			want: true,
		},
		"status-only update, generation observed": {
			old: withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Obj(), 1),
			new: withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Obj(), 2),
		},
		"status-only update, generation not observed": {
			old:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Obj(), 1),
			new:  withStatus(utiltesting.MakeBinding("web", "ns").Generation(2).Obj(), 1),
			want: true,
		},
	}
	p := needsScheduling(bindingkind.ResourceBinding{})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if !p.Create(event.CreateEvent{Object: utiltesting.MakeBinding("web", "ns").Obj()}) {
		t.Error("a new binding must be scheduled")
	}
	if p.Delete(event.DeleteEvent{Object: utiltesting.MakeBinding("web", "ns").Obj()}) {
		t.Error("a deleted binding needs no scheduling")
	}
}

func TestClusterChanged(t *testing.T) {
	base := func() *utiltesting.ClusterWrapper {
		return utiltesting.MakeCluster("m1").Label("env", "prod").Region("r1").APIEnablement("apps/v1", "Deployment").Ready()
	}
	withSummary := base().Obj()
	withSummary.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{}
	withSummary.Status.KubernetesVersion = "v1.37.2"
	withSummary.ResourceVersion = "42"
	heartbeat := base().Obj()
	heartbeat.Status.Conditions[0].LastTransitionTime = metav1.Unix(1, 0)
	heartbeat.Status.Conditions[0].Message = "still ready"
	notReady := base().Obj()
	notReady.Status.Conditions[0].Status = metav1.ConditionFalse
	versionOnly := base().Obj()
	versionOnly.Status.KubernetesVersion = "v1.37.2"
	cases := map[string]struct {
		new         *clusterv1alpha1.Cluster
		want        bool
		wantSummary bool
	}{
		"nothing":                      {new: base().Obj()},
		"resource summary, version":    {new: withSummary, wantSummary: true},
		"version":                      {new: versionOnly},
		"condition timestamp, message": {new: heartbeat},
		"label":                        {new: base().Label("env", "dev").Obj(), want: true},
		"region":                       {new: base().Region("r2").Obj(), want: true},
		"taint":                        {new: base().Taint("k", "", corev1.TaintEffectNoSchedule).Obj(), want: true},
		"API enablements":              {new: base().APIEnablement("v1", "ConfigMap").Obj(), want: true},
		"condition status":             {new: notReady, want: true},
		"deleting":                     {new: base().Deleting().Obj(), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := base().Obj()
			if got := clusterChanged(old, tc.new); got != tc.want {
				t.Errorf("clusterChanged = %v, want %v", got, tc.want)
			}
			if got := summaryChanged(old, tc.new); got != tc.wantSummary {
				t.Errorf("summaryChanged = %v, want %v", got, tc.wantSummary)
			}
		})
	}
}

// TestStatusTimeSurvivesTheWire: what the scheduler puts in a status (and
// hands to the executor) compares equal to what the API server gives back
// for it, so comparing the two never finds a change that is not there.
func TestStatusTimeSurvivesTheWire(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 6, 17, 51, 57, 486_280_000, time.UTC))
	now := statusTime(c)
	status := &workv1alpha2.ResourceBindingStatus{LastScheduledTime: &now, Conditions: []metav1.Condition{{
		Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess, LastTransitionTime: now}}}
	data, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	var stored workv1alpha2.ResourceBindingStatus
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	if !semantic.Equal(status, &stored) {
		t.Errorf("the status as stored differs from the status written: %s", cmp.Diff(status, &stored))
	}
	if !bindingkind.ScheduledOf(status, 1).Same(bindingkind.ScheduledOf(&stored, 1)) {
		t.Errorf("the handed-over part differs from the one stored")
	}
}

// TestExecutorWillWrite: when the scheduler leaves its part of a status
// with the same placement to the executor's next write (decision 50).
func TestExecutorWillWrite(t *testing.T) {
	fullyApplied := func(generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: generation}}
	}
	// placed is a placed binding at generation 3 that scheduler and
	// executor last wrote at 2, changed by mutate (when set).
	placed := func(mutate func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
		b := utiltesting.MakeBinding("web", "ns").Generation(3).TargetCluster("m1", 1).Obj()
		b.Status.SchedulerObservedGeneration = 2
		b.Status.Conditions = fullyApplied(2)
		if mutate != nil {
			mutate(b)
		}
		return b
	}
	cases := map[string]struct {
		mutate                     func(*workv1alpha2.ResourceBinding)
		hasPending, wroteSomething bool
		want                       bool
	}{
		"a template change of a placed binding": {want: true},
		"the generation observed already": {mutate: func(b *workv1alpha2.ResourceBinding) {
			b.Status.SchedulerObservedGeneration = 3
		}},
		"the executor wrote this generation first": {mutate: func(b *workv1alpha2.ResourceBinding) {
			b.Status.Conditions = fullyApplied(3)
		}},
		"nothing placed: the executor waits for a placement": {mutate: func(b *workv1alpha2.ResourceBinding) {
			b.Spec.Clusters = nil
		}},
		"a part already pending":                     {hasPending: true},
		"the attempt wrote a target or tasks itself": {wroteSomething: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := placed(tc.mutate)
			if got := executorWillWrite(b, &b.Spec, &b.Status, tc.hasPending, tc.wroteSomething); got != tc.want {
				t.Errorf("executorWillWrite = %v, want %v", got, tc.want)
			}
		})
	}
}
