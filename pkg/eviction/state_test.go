package eviction

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestPreservedState(t *testing.T) {
	status := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "member1", Status: &runtime.RawExtension{Raw: []byte(`{"replicas":2,"jobStatus":{"checkpoint":"chk-17"},"note":"has spaces"}`)}},
		{ClusterName: "member2"},
	}}
	rules := func(paths ...string) *policyv1alpha1.StatePreservation {
		sp := &policyv1alpha1.StatePreservation{}
		for i, p := range paths {
			sp.Rules = append(sp.Rules, policyv1alpha1.StatePreservationRule{AliasLabelName: []string{"a", "b"}[i], JSONPath: p})
		}
		return sp
	}
	cases := map[string]struct {
		rules   *policyv1alpha1.StatePreservation
		cluster string
		want    map[string]string
		wantErr string
	}{
		"no rules":          {cluster: "member1"},
		"two values":        {rules: rules("{.replicas}", "{.jobStatus.checkpoint}"), cluster: "member1", want: map[string]string{"a": "2", "b": "chk-17"}},
		"status not there":  {rules: rules("{.replicas}"), cluster: "member2", wantErr: "has not been collected yet"},
		"cluster not there": {rules: rules("{.replicas}"), cluster: "member3", wantErr: "has not been collected yet"},
		"missing field":     {rules: rules("{.missing}"), cluster: "member1", wantErr: "rules[0].jsonPath"},
		"not a label value": {rules: rules("{.note}"), cluster: "member1", wantErr: "is not a label value"},
		"bad jsonpath":      {rules: rules("{.replicas"), cluster: "member1", wantErr: "rules[0].jsonPath"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PreservedState(tc.rules, status, tc.cluster)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInjectedLabels(t *testing.T) {
	state := map[string]string{"a": "2"}
	spec := func(clusters []string, mode policyv1alpha1.PurgeMode, before ...string) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{
			{FromCluster: "old", PurgeMode: policyv1alpha1.PurgeModeDirectly, PreservedLabelState: map[string]string{"a": "1"}},
			{FromCluster: "member1", PurgeMode: mode, PreservedLabelState: state, ClustersBeforeFailover: before},
		}}
		for _, c := range clusters {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: c})
		}
		return s
	}
	cases := map[string]struct {
		spec    *workv1alpha2.ResourceBindingSpec
		cluster string
		want    map[string]string
	}{
		"moved, latest task":         {spec: spec([]string{"member2"}, policyv1alpha1.PurgeModeDirectly, "member1"), cluster: "member2", want: state},
		"Immediately means Directly": {spec: spec([]string{"member2"}, policyv1alpha1.PurgeModeImmediately, "member1"), cluster: "member2", want: state}, //nolint:staticcheck // SA1019: the deprecated spelling on purpose
		"Gracefully":                 {spec: spec([]string{"member2"}, policyv1alpha1.PurgeModeGracefully, "member1"), cluster: "member2"},
		"back where it ran":          {spec: spec([]string{"member2"}, policyv1alpha1.PurgeModeDirectly, "member1", "member2"), cluster: "member2"},
		"in two clusters":            {spec: spec([]string{"member2", "member3"}, policyv1alpha1.PurgeModeDirectly, "member1"), cluster: "member2"},
		"no task":                    {spec: &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}}}, cluster: "member2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, InjectedLabels(tc.spec, tc.cluster)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
