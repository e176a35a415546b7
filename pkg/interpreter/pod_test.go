package interpreter

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestPodStatus(t *testing.T) {
	item := func(phase string) workv1alpha2.AggregatedStatusItem {
		raw, _ := json.Marshal(map[string]any{"phase": phase})
		return workv1alpha2.AggregatedStatusItem{Status: &runtime.RawExtension{Raw: raw}}
	}
	for name, tc := range map[string]struct {
		phases []string
		want   any
	}{
		"all running":         {[]string{"Running", "Running"}, "Running"},
		"one pending":         {[]string{"Running", "Pending"}, "Pending"},
		"one failed":          {[]string{"Pending", "Failed", "Running"}, "Failed"},
		"all succeeded":       {[]string{"Succeeded", "Succeeded"}, "Succeeded"},
		"running and done":    {[]string{"Succeeded", "Running"}, "Running"},
		"no copy reports yet": {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			var items []workv1alpha2.AggregatedStatusItem
			for _, p := range tc.phases {
				items = append(items, item(p))
			}
			got := aggregatePodStatus(items)
			if tc.want == nil {
				if got != nil {
					t.Errorf("got %v, want nil", got)
				}
				return
			}
			if got["phase"] != tc.want {
				t.Errorf("phase = %v, want %v", got["phase"], tc.want)
			}
		})
	}

	pod := func(phase, ready string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "status": map[string]any{
			"phase": phase, "conditions": []any{map[string]any{"type": "Ready", "status": ready}}}}}
	}
	for _, tc := range []struct {
		pod  *unstructured.Unstructured
		want workv1alpha2.ResourceHealth
	}{
		{pod("Running", "True"), workv1alpha2.ResourceHealthy},
		{pod("Running", "False"), workv1alpha2.ResourceUnhealthy},
		{pod("Succeeded", "False"), workv1alpha2.ResourceHealthy},
		{pod("Pending", "False"), workv1alpha2.ResourceUnhealthy},
	} {
		if got := nativeHealth(tc.pod); got != tc.want {
			t.Errorf("health of %v = %s, want %s", tc.pod.Object["status"], got, tc.want)
		}
	}
}
