package interpreter

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// nativeReflectStatus is the part of a member object's status recorded in
// the binding: the counters (plus observedGeneration and, for atoll's own
// bookkeeping, the member's generation) for workloads; the whole status
// otherwise. Volatile fields such as condition heartbeat times are left out
// so that they never cause a write.
func nativeReflectStatus(obj *unstructured.Unstructured) map[string]any {
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	fields := kinds[obj.GroupVersionKind().GroupKind()].counters
	if fields == nil {
		if len(status) == 0 {
			return nil
		}
		delete(status, "conditions")
		return status
	}
	out := map[string]any{}
	for _, f := range append(fields, "observedGeneration") {
		if v, ok := status[f]; ok {
			out[f] = v
		}
	}
	out["generation"] = obj.GetGeneration()
	return out
}

// nativeHealth interprets a member object's health for its kind; kinds
// without a rule are healthy once they exist.
func nativeHealth(obj *unstructured.Unstructured) workv1alpha2.ResourceHealth {
	k := kinds[obj.GroupVersionKind().GroupKind()]
	if k.health == nil {
		return workv1alpha2.ResourceHealthy
	}
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	return k.health(obj, status)
}

func healthIf(ok bool) workv1alpha2.ResourceHealth {
	if ok {
		return workv1alpha2.ResourceHealthy
	}
	return workv1alpha2.ResourceUnhealthy
}

// ReflectedCurrent reports whether a reflected workload status shows its
// member object's generation as observed by the member's own controller
// (true for a status that records no generation, as a script's may not).
func ReflectedCurrent(status map[string]any) bool {
	if _, ok := status["generation"]; !ok {
		return true
	}
	return num(status, "observedGeneration") >= num(status, "generation")
}

func num(m map[string]any, key string) int64 {
	v, _ := toFloat(m[key])
	return int64(v)
}

// nativeAggregateStatus returns the template's status from its clusters'
// reflected statuses (nil when the kind aggregates nothing). For workloads
// the counters add up, and observedGeneration becomes the template's
// generation only once every member runs the current manifest and has
// observed it (allCurrent), so `kubectl rollout status` on the template
// means what it says; until then it stays what the template shows.
func nativeAggregateStatus(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem, allCurrent bool) map[string]any {
	gk := template.GroupVersionKind().GroupKind()
	switch gk {
	case podGK:
		return aggregatePodStatus(items)
	case serviceGK, ingressGK:
		return aggregateLoadBalancer(template, items)
	}
	fields := kinds[gk].counters
	if fields == nil {
		return nil
	}
	reflected := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if r := StatusOf(item); r != nil {
			reflected = append(reflected, r)
		}
	}
	out := map[string]any{}
	for _, f := range fields {
		var sum int64
		for _, r := range reflected {
			sum += num(r, f)
		}
		out[f] = sum
	}
	if gk == jobGK {
		return out
	}
	observed := template.GetGeneration()
	for _, r := range reflected {
		if !ReflectedCurrent(r) {
			allCurrent = false
		}
	}
	if !allCurrent {
		// Not every member has observed the current manifest: the template
		// keeps the generation it last showed as observed (as Karmada
		// does), rather than one a member may never have seen, and no
		// write is needed for it.
		observed, _, _ = unstructured.NestedInt64(template.Object, "status", "observedGeneration")
	}
	out["observedGeneration"] = observed
	return out
}

// podPhaseOrder ranks pod phases for aggregation, as Karmada does: a
// template pod is Failed if a copy failed, else Pending while one is,
// else Running while one runs, else Succeeded.
var podPhaseOrder = map[string]int{"Succeeded": 1, "Running": 2, "Pending": 3, "Failed": 4}

// aggregatePodStatus is a template Pod's phase from its copies' phases
// (nil before any copy reports one).
func aggregatePodStatus(items []workv1alpha2.AggregatedStatusItem) map[string]any {
	phase := ""
	for _, item := range items {
		p, _ := StatusOf(item)["phase"].(string)
		if podPhaseOrder[p] > podPhaseOrder[phase] {
			phase = p
		}
	}
	if phase == "" {
		return nil
	}
	return map[string]any{"phase": phase}
}

// aggregateLoadBalancer is a Service's or Ingress's load-balancer status
// from its copies': every ingress point of every member, in cluster order,
// once each (as Karmada aggregates them). With none: nothing to write,
// unless the template still shows points (then they are cleared; a merge
// patch removes a key only by null).
func aggregateLoadBalancer(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) map[string]any {
	var points []any
	seen := map[string]bool{}
	for _, item := range items {
		lb, _ := StatusOf(item)["loadBalancer"].(map[string]any)
		ingress, _ := lb["ingress"].([]any)
		for _, p := range ingress {
			key, _ := json.Marshal(p)
			if !seen[string(key)] {
				seen[string(key)] = true
				points = append(points, p)
			}
		}
	}
	if len(points) == 0 {
		if have, _, _ := unstructured.NestedSlice(template.Object, "status", "loadBalancer", "ingress"); len(have) == 0 {
			return nil
		}
		return map[string]any{"loadBalancer": map[string]any{"ingress": nil}}
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": points}}
}

// podHealth: a Pod is healthy once it succeeded, or runs with every
// container ready (its Ready condition), as Karmada interprets it.
func podHealth(obj *unstructured.Unstructured, status map[string]any) workv1alpha2.ResourceHealth {
	switch status["phase"] {
	case "Succeeded":
		return workv1alpha2.ResourceHealthy
	case "Running":
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				return healthIf(m["status"] == "True")
			}
		}
	}
	return workv1alpha2.ResourceUnhealthy
}

// StatusOf decodes an aggregated status item's reflected status (nil when
// there is none).
func StatusOf(item workv1alpha2.AggregatedStatusItem) map[string]any {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(item.Status.Raw, &m); err != nil {
		return nil
	}
	return m
}
