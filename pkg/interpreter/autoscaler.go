package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What atoll knows about HorizontalPodAutoscalers, the member autoscalers
// a gradual move steers (pkg/rebalance), and about the replica counts of
// scalable kinds that a move observes.

var hpaGK = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

// IsAutoscaler reports whether gk is the HorizontalPodAutoscaler kind.
func IsAutoscaler(gk schema.GroupKind) bool { return gk == hpaGK }

// AutoscalerGroupKind is the HorizontalPodAutoscaler kind.
func AutoscalerGroupKind() schema.GroupKind { return hpaGK }

// ScaleTarget is the template an autoscaler scales.
type ScaleTarget struct {
	Group, Kind, Name string
}

// ScaleTargetOf reads an HPA's spec.scaleTargetRef (ok false for other
// kinds or an HPA without a target).
func ScaleTargetOf(obj *unstructured.Unstructured) (ScaleTarget, bool) {
	if !IsAutoscaler(obj.GroupVersionKind().GroupKind()) {
		return ScaleTarget{}, false
	}
	apiVersion, _, _ := unstructured.NestedString(obj.Object, "spec", "scaleTargetRef", "apiVersion")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "scaleTargetRef", "name")
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" || name == "" {
		return ScaleTarget{}, false
	}
	return ScaleTarget{Group: gv.Group, Kind: kind, Name: name}, true
}

// AutoscalerBounds reads an HPA's minReplicas (default 1) and maxReplicas.
func AutoscalerBounds(obj *unstructured.Unstructured) (minReplicas, maxReplicas int32) {
	lo, found, _ := unstructured.NestedInt64(obj.Object, "spec", "minReplicas")
	if !found {
		lo = 1
	}
	hi, _, _ := unstructured.NestedInt64(obj.Object, "spec", "maxReplicas")
	return int32(lo), int32(hi)
}

// SetAutoscalerBounds writes an HPA's minReplicas and maxReplicas.
func SetAutoscalerBounds(obj *unstructured.Unstructured, minReplicas, maxReplicas int32) {
	_ = unstructured.SetNestedField(obj.Object, int64(minReplicas), "spec", "minReplicas")
	_ = unstructured.SetNestedField(obj.Object, int64(maxReplicas), "spec", "maxReplicas")
}

// DefaultScaleDownWindowSeconds is the HPA controller's scale-down
// stabilization window when an HPA sets none.
const DefaultScaleDownWindowSeconds = 300

// ScaleDownWindowSeconds reads an HPA's effective
// spec.behavior.scaleDown.stabilizationWindowSeconds.
func ScaleDownWindowSeconds(obj *unstructured.Unstructured) int32 {
	w, found, _ := unstructured.NestedInt64(obj.Object, "spec", "behavior", "scaleDown", "stabilizationWindowSeconds")
	if !found {
		return DefaultScaleDownWindowSeconds
	}
	return int32(w)
}

// AutoscalerStatus reads the current and desired replicas from an HPA's
// reflected status (ok false when the member HPA has not reported yet).
func AutoscalerStatus(status map[string]any) (current, desired int32, ok bool) {
	if status == nil {
		return 0, 0, false
	}
	_, hasDesired := status["desiredReplicas"]
	return int32(num(status, "currentReplicas")), int32(num(status, "desiredReplicas")), hasDesired
}

// ReplicaCounts reads a scalable workload's replicas (pods that exist)
// and ready replicas from its reflected status.
func ReplicaCounts(gk schema.GroupKind, status map[string]any) (replicas, ready int32) {
	return int32(num(status, "replicas")), int32(num(status, readyField(gk)))
}

func readyField(gk schema.GroupKind) string {
	if gk == deploymentGK || gk == replicaSetGK {
		return "availableReplicas"
	}
	return "readyReplicas"
}
