package executor

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter"
)

func TestPlanWithdrawals(t *testing.T) {
	spec := func(edit func(*workv1alpha2.ResourceBindingSpec)) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{Kind: "PersistentVolumeClaim"}}
		if edit != nil {
			edit(s)
		}
		return s
	}
	available := func(string) string { return "" }
	cases := map[string]struct {
		reached      []string
		targets      map[string]int32
		spec         *workv1alpha2.ResourceBindingSpec
		holdsData    bool
		suspended    bool
		unavailable  func(string) string
		wantWithdraw []string
		wantKept     map[string]string
	}{
		"targets stay, the rest is withdrawn": {
			reached: []string{"m1", "m2", "m3"}, targets: map[string]int32{"m1": 1}, spec: spec(nil), unavailable: available,
			wantWithdraw: []string{"m2", "m3"}, wantKept: map[string]string{},
		},
		"a graceful eviction task holds its copy": {
			reached: []string{"m1", "m2"}, targets: map[string]int32{"m1": 1}, unavailable: available,
			spec: spec(func(s *workv1alpha2.ResourceBindingSpec) {
				s.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2"}}
			}),
			wantKept: map[string]string{"m2": "kept by a graceful eviction task"},
		},
		"suspended dispatching withdraws nothing": {
			reached: []string{"m2"}, spec: spec(nil), suspended: true, unavailable: available,
			wantKept: map[string]string{"m2": "dispatching is suspended; withdrawal waits"},
		},
		"an unavailable member waits": {
			reached: []string{"m2"}, spec: spec(nil), unavailable: func(string) string { return "cluster m2 is not Ready" },
			wantKept: map[string]string{"m2": "withdrawal pending: cluster m2 is not Ready"},
		},
		"data is kept": {
			reached: []string{"m2"}, spec: spec(nil), holdsData: true, unavailable: available,
			wantKept: map[string]string{"m2": "kept: a PersistentVolumeClaim holds data; it is removed from members only when its template is deleted"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			withdraw, kept := planWithdrawals(tc.reached, tc.targets, tc.spec, tc.holdsData, tc.suspended, tc.unavailable)
			if diff := cmp.Diff(tc.wantWithdraw, withdraw); diff != "" {
				t.Errorf("withdraw (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	raw := func(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }
	applied := func(cluster string) clusterResult {
		return clusterResult{item: workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: workv1alpha2.ResourceHealthy},
			current: true, reflected: []byte(`{"replicas":1}`)}
	}
	scriptErr := &interpreter.Error{Customization: "c", Operation: interpreter.StatusReflection, Err: errors.New("boom")}
	old := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m0", Applied: true, Status: raw(`{"replicas":2}`)},
	}}
	cases := map[string]struct {
		results       []clusterResult
		kept          map[string]string
		targets       int
		wantClusters  []string
		wantMessages  []string
		wantCondition string
		wantApplied   bool
		wantInterpret bool
	}{
		"all applied": {
			results: []clusterResult{applied("m2"), applied("m1")}, targets: 2,
			wantClusters: []string{"m1", "m2"}, wantMessages: []string{"", ""}, wantCondition: "FullyAppliedSuccess", wantApplied: true,
		},
		"a kept copy keeps its last status and says why": {
			results: []clusterResult{applied("m1")}, kept: map[string]string{"m0": "kept by a graceful eviction task", "m9": "withdrawal pending"}, targets: 1,
			wantClusters: []string{"m0", "m1", "m9"}, wantMessages: []string{"kept by a graceful eviction task", "", "withdrawal pending"},
			wantCondition: "FullyAppliedSuccess", wantApplied: true,
		},
		"a failed cluster and a failing script": {
			results: []clusterResult{applied("m1"), {item: workv1alpha2.AggregatedStatusItem{ClusterName: "m2", AppliedMessage: "boom"}, interpretErr: scriptErr}},
			targets: 2, wantClusters: []string{"m1", "m2"}, wantMessages: []string{"", "boom"}, wantCondition: "FullyAppliedFailed", wantInterpret: true,
		},
		"not scheduled": {wantCondition: "NoClusters"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(old, tc.results, tc.kept, tc.targets, 3)
			var clusters, messages []string
			for _, item := range got.status.AggregatedStatus {
				clusters = append(clusters, item.ClusterName)
				messages = append(messages, item.AppliedMessage)
			}
			if diff := cmp.Diff(tc.wantClusters, clusters, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMessages, messages, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			c := meta.FindStatusCondition(got.status.Conditions, workv1alpha2.FullyApplied)
			if c == nil || c.Reason != tc.wantCondition || c.ObservedGeneration != 3 {
				t.Errorf("FullyApplied = %+v, want reason %s at generation 3", c, tc.wantCondition)
			}
			if c != nil && (c.Status == metav1.ConditionTrue) != tc.wantApplied {
				t.Errorf("FullyApplied status %s", c.Status)
			}
			if (got.interpretErr != nil) != tc.wantInterpret {
				t.Errorf("interpretErr = %v", got.interpretErr)
			}
			if len(old.AggregatedStatus) != 1 || old.AggregatedStatus[0].AppliedMessage != "" {
				t.Errorf("summarize changed the old status: %+v", old.AggregatedStatus)
			}
		})
	}
}

func TestSetDispatching(t *testing.T) {
	clusters := []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}}
	suspended := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}
	onM2 := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"m2", "m9"}}}}
	var conds []metav1.Condition
	step := func(s *workv1alpha2.Suspension, wantEvent bool, wantStatus metav1.ConditionStatus, wantMessage string) {
		t.Helper()
		ev := setDispatching(&conds, &workv1alpha2.ResourceBindingSpec{Clusters: clusters, Suspension: s}, 1)
		if (ev != nil) != wantEvent {
			t.Fatalf("event %v, want %v", ev, wantEvent)
		}
		cond := meta.FindStatusCondition(conds, workv1alpha2.Dispatching)
		switch {
		case wantStatus == "" && cond != nil:
			t.Fatalf("condition %+v, want none", cond)
		case wantStatus == "":
		case cond == nil || cond.Status != wantStatus || !strings.Contains(cond.Message, wantMessage):
			t.Fatalf("condition %+v, want %s with %q", cond, wantStatus, wantMessage)
		}
	}
	step(nil, false, "", "")                                      // never suspended: no condition
	step(suspended, true, metav1.ConditionFalse, "is suspended")  // suspends
	step(suspended, false, metav1.ConditionFalse, "is suspended") // no second event
	step(onM2, false, metav1.ConditionFalse, "cluster(s) m2 is suspended")
	step(nil, true, metav1.ConditionTrue, "resumed")
	step(nil, false, metav1.ConditionTrue, "resumed")
}

func TestListing(t *testing.T) {
	if listing(nil) || listing([]clusterResult{{}, {item: workv1alpha2.AggregatedStatusItem{Applied: true}}}) {
		t.Error("no cluster listing, but listing says so")
	}
	if !listing([]clusterResult{{}, {listing: &memberList{}}}) {
		t.Error("a cluster still listing was not seen")
	}
}
