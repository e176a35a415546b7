package executor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

func TestConflictResolution(t *testing.T) {
	cases := map[string]struct {
		annotation string
		policy     policyv1alpha1.ConflictResolution
		want       policyv1alpha1.ConflictResolution
	}{
		"no annotation: the policy's":       {policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictOverwrite},
		"overwrite annotation beats Abort":  {annotation: "overwrite", policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictOverwrite},
		"abort annotation beats Overwrite":  {annotation: "abort", policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictAbort},
		"unknown annotation: the policy's":  {annotation: "maybe", policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictAbort},
		"annotation is case-insensitive":    {annotation: "Overwrite", want: policyv1alpha1.ConflictOverwrite},
		"empty policy and annotation stays": {want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if tc.annotation != "" {
				u.SetAnnotations(map[string]string{ConflictResolutionAnnotation: tc.annotation})
			}
			if diff := cmp.Diff(tc.want, conflictResolution(u, tc.policy)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectableChanged(t *testing.T) {
	base := utiltesting.MakeCluster("member1").Label("env", "prod").Region("eu").Zones("a")
	cases := map[string]struct {
		changed *clusterv1alpha1.Cluster
		want    bool
	}{
		"nothing":   {changed: base.Obj(), want: false},
		"label":     {changed: utiltesting.MakeCluster("member1").Label("env", "dev").Region("eu").Zones("a").Obj(), want: true},
		"region":    {changed: utiltesting.MakeCluster("member1").Label("env", "prod").Region("us").Zones("a").Obj(), want: true},
		"zones":     {changed: utiltesting.MakeCluster("member1").Label("env", "prod").Region("eu").Zones("a", "b").Obj(), want: true},
		"taint":     {changed: utiltesting.MakeCluster("member1").Label("env", "prod").Region("eu").Zones("a").Taint("k", "v", corev1.TaintEffectNoSchedule).Obj(), want: false},
		"condition": {changed: utiltesting.MakeCluster("member1").Label("env", "prod").Region("eu").Zones("a").Condition("Ready", metav1.ConditionFalse, "Down").Obj(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := selectableChanged(base.Obj(), tc.changed); got != tc.want {
				t.Errorf("selectableChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRawStatusIsBounded(t *testing.T) {
	small := map[string]any{"replicas": int64(3)}
	if whole, bounded := rawStatus(small); string(bounded.Raw) != `{"replicas":3}` || string(whole) != `{"replicas":3}` {
		t.Errorf("small status = %s, whole %s", bounded.Raw, whole)
	}
	big := map[string]any{"entries": strings.Repeat("x", maxReflectedStatus)}
	whole, bounded := rawStatus(big)
	if len(whole) <= maxReflectedStatus {
		t.Errorf("whole status for aggregation has %d bytes, want all of it", len(whole))
	}
	got := bounded.Raw
	if len(got) > 200 || !strings.Contains(string(got), "atoll.dev/omitted") || !strings.Contains(string(got), "16384-byte limit") {
		t.Errorf("big status reflected as %d bytes: %.200s", len(got), got)
	}
	if n := len(text.Truncate(strings.Repeat("e", 5000), maxItemMessage)); n != maxItemMessage {
		t.Errorf("truncated message has %d bytes, want %d", n, maxItemMessage)
	}
}
