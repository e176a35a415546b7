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

func TestLoadBalancerAndBudgetStatus(t *testing.T) {
	item := func(status map[string]any) workv1alpha2.AggregatedStatusItem {
		raw, _ := json.Marshal(status)
		return workv1alpha2.AggregatedStatusItem{Status: &runtime.RawExtension{Raw: raw}}
	}
	lb := func(ips ...string) map[string]any {
		var points []any
		for _, ip := range ips {
			points = append(points, map[string]any{"ip": ip})
		}
		return map[string]any{"loadBalancer": map[string]any{"ingress": points}}
	}
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service"}}
	got := nativeAggregateStatus(svc, []workv1alpha2.AggregatedStatusItem{item(lb("10.0.0.1")), item(lb("10.0.0.2", "10.0.0.1")), item(map[string]any{})}, true)
	points, _ := got["loadBalancer"].(map[string]any)["ingress"].([]any)
	if len(points) != 2 || points[0].(map[string]any)["ip"] != "10.0.0.1" || points[1].(map[string]any)["ip"] != "10.0.0.2" {
		t.Errorf("service load balancer = %v, want 10.0.0.1 then 10.0.0.2", got)
	}
	if got := nativeAggregateStatus(svc, []workv1alpha2.AggregatedStatusItem{item(map[string]any{})}, true); got != nil {
		t.Errorf("no ingress anywhere nor on the template: %v, want nothing to write", got)
	}
	svc.Object["status"] = lb("10.0.0.9")
	got = nativeAggregateStatus(svc, []workv1alpha2.AggregatedStatusItem{item(map[string]any{})}, true)
	if lbs, ok := got["loadBalancer"].(map[string]any); !ok || lbs["ingress"] != nil {
		t.Errorf("points gone from every member: %v, want ingress cleared (null)", got)
	}
	ing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress"}}
	if got := nativeAggregateStatus(ing, []workv1alpha2.AggregatedStatusItem{item(lb("10.0.0.3"))}, true); got["loadBalancer"] == nil {
		t.Errorf("ingress load balancer not aggregated: %v", got)
	}

	pdb := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": map[string]any{"generation": int64(2)}}}
	budget := func(current, desired, allowed, expected int64) workv1alpha2.AggregatedStatusItem {
		return item(map[string]any{"currentHealthy": current, "desiredHealthy": desired, "disruptionsAllowed": allowed, "expectedPods": expected,
			"observedGeneration": 2, "generation": 2})
	}
	got = nativeAggregateStatus(pdb, []workv1alpha2.AggregatedStatusItem{budget(3, 2, 1, 3), budget(2, 2, 0, 2)}, true)
	want := map[string]any{"currentHealthy": int64(5), "desiredHealthy": int64(4), "disruptionsAllowed": int64(1), "expectedPods": int64(5), "observedGeneration": int64(2)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pdb %s = %v, want %v", k, got[k], v)
		}
	}
}
