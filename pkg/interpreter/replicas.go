package interpreter

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// nativeReplicas reads replicas and the requirements of one replica, as
// Karmada's native interpreter: spec.replicas of Deployments, StatefulSets
// and ReplicaSets, spec.parallelism of Jobs (1 when unset), 1 for a Pod; the
// requirements come from the pod template.
func nativeReplicas(k kind, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	var replicas int64
	switch {
	case k.isPod:
		replicas = 1
	case k.replicas != nil:
		n, found, err := unstructured.NestedInt64(obj.Object, k.replicas...)
		if err != nil {
			return 0, nil, fmt.Errorf("reading %s: %w", fieldPath(k.replicas), err)
		}
		replicas = n
		if !found && obj.GroupVersionKind().GroupKind() == jobGK {
			replicas = 1 // the API server defaults parallelism to 1
		}
	default:
		return 0, nil, nil
	}
	if replicas < 0 || replicas > math.MaxInt32 {
		return 0, nil, fmt.Errorf("%s: %d is out of range", fieldPath(k.replicas), replicas)
	}
	var template corev1.PodTemplateSpec
	if k.isPod {
		if err := fromMap(obj.Object, "", &template); err != nil {
			return 0, nil, err
		}
	} else if raw, found, err := unstructured.NestedMap(obj.Object, k.podTemplate...); err != nil {
		return 0, nil, fmt.Errorf("reading %s: %w", fieldPath(k.podTemplate), err)
	} else if found {
		if err := fromMap(raw, fieldPath(k.podTemplate), &template); err != nil {
			return 0, nil, err
		}
	}
	return int32(replicas), podRequirements(&template), nil
}

// nativeRevise sets one cluster's share of the replicas. A Job's
// parallelism is its replicas; its completions, when set and not Indexed,
// are shared in the same proportion, rounded up, so that every cluster
// completes its part and together they complete at least the template's
// count (Indexed completions name indexes and cannot be split).
func nativeRevise(k kind, obj *unstructured.Unstructured, share int64) error {
	if k.replicas == nil {
		return nil
	}
	if obj.GroupVersionKind().GroupKind() == jobGK {
		total, found, _ := unstructured.NestedInt64(obj.Object, "spec", "parallelism")
		if !found {
			total = 1
		}
		completions, hasCompletions, _ := unstructured.NestedInt64(obj.Object, "spec", "completions")
		mode, _, _ := unstructured.NestedString(obj.Object, "spec", "completionMode")
		if hasCompletions && mode != "Indexed" && total > 0 {
			part := (completions*share + total - 1) / total
			if err := unstructured.SetNestedField(obj.Object, part, "spec", "completions"); err != nil {
				return err
			}
		}
	}
	return unstructured.SetNestedField(obj.Object, share, k.replicas...)
}

// podRequirements are the resources one replica requests (the Kubernetes
// effective pod request: containers summed, init containers as their
// maximum, sidecars and pod overhead included), its hard node constraints
// (Karmada's nodeClaim) and its priority class. nil when there are none.
func podRequirements(t *corev1.PodTemplateSpec) *workv1alpha2.ReplicaRequirements {
	spec := &t.Spec
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{})
	if len(requests) == 0 {
		requests = nil
	}
	claim := nodeClaim(spec)
	if requests == nil && claim == nil {
		return nil
	}
	return &workv1alpha2.ReplicaRequirements{NodeClaim: claim, ResourceRequest: requests, PriorityClassName: spec.PriorityClassName}
}

func nodeClaim(spec *corev1.PodSpec) *workv1alpha2.NodeClaim {
	claim := &workv1alpha2.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(claim.NodeSelector) == 0 && len(claim.Tolerations) == 0 && claim.HardNodeAffinity == nil {
		return nil
	}
	return claim
}

// fromMap decodes a plain map into a typed value; path names the field in
// errors.
func fromMap(m map[string]any, path string, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		if path == "" {
			return fmt.Errorf("decoding: %w", err)
		}
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

func fieldPath(p []string) string {
	out := ""
	for _, s := range p {
		out += "." + s
	}
	return out
}
