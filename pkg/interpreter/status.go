package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetGK  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	daemonSetGK   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// counters are the integer status fields that add up across clusters, per
// kind. Other kinds reflect their whole status and aggregate nothing.
var counters = map[schema.GroupKind][]string{
	deploymentGK:  {"replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas"},
	statefulSetGK: {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
	replicaSetGK:  {"replicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas"},
	daemonSetGK:   {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady", "updatedNumberScheduled", "numberAvailable", "numberUnavailable"},
	jobGK:         {"active", "succeeded", "failed", "ready"},
}

// ReflectStatus is the part of a member object's status recorded in the
// binding: the counters (plus observedGeneration and, for atoll's own
// bookkeeping, the member's generation) for workloads; the whole status
// otherwise. Volatile fields such as condition heartbeat times are left
// out so that they never cause a write.
func ReflectStatus(obj *unstructured.Unstructured) map[string]any {
	gk := obj.GroupVersionKind().GroupKind()
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	fields, ok := counters[gk]
	if !ok {
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

// Health interprets a member object's health for its kind.
func Health(obj *unstructured.Unstructured) workv1alpha2.ResourceHealth {
	gk := obj.GroupVersionKind().GroupKind()
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	current := observed >= obj.GetGeneration()
	want, hasReplicas, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !hasReplicas {
		want = 1
	}
	switch gk {
	case deploymentGK, replicaSetGK:
		return healthIf(current && num(status, "availableReplicas") >= want && num(status, "updatedReplicas") >= want)
	case statefulSetGK:
		return healthIf(current && num(status, "readyReplicas") >= want && num(status, "updatedReplicas") >= want)
	case daemonSetGK:
		return healthIf(current && num(status, "numberAvailable") >= num(status, "desiredNumberScheduled") &&
			num(status, "updatedNumberScheduled") >= num(status, "desiredNumberScheduled"))
	}
	return workv1alpha2.ResourceHealthy
}

func healthIf(ok bool) workv1alpha2.ResourceHealth {
	if ok {
		return workv1alpha2.ResourceHealthy
	}
	return workv1alpha2.ResourceUnhealthy
}

func num(m map[string]any, key string) int64 {
	v, _ := toFloat(m[key])
	return int64(v)
}

// AggregateStatus returns the template's status from the reflected statuses
// of its members (nil when the kind aggregates nothing). For workloads the
// counters add up, and observedGeneration becomes the template's generation
// only once every member runs the current manifest and has observed it
// (allCurrent), so `kubectl rollout status` on the template means what it says.
func AggregateStatus(gk schema.GroupKind, templateGeneration int64, reflected []map[string]any, allCurrent bool) map[string]any {
	fields, ok := counters[gk]
	if !ok {
		return nil
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
	observed := templateGeneration
	for _, r := range reflected {
		if num(r, "observedGeneration") < num(r, "generation") {
			allCurrent = false
		}
	}
	if !allCurrent {
		observed = templateGeneration - 1
	}
	out["observedGeneration"] = observed
	return out
}
