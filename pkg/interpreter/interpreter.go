// Package interpreter knows what atoll needs to know about native kinds:
// how to turn a control-plane template into the manifest for one member
// (dropping what the member owns), how healthy a member object is, which
// part of its status to reflect, and how per-cluster statuses add up on the
// template. It is the native half of Karmada's resource interpreter.
package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// RetainReplicasLabel on a template (Karmada's) says member clusters own
// spec.replicas (a member HPA scales the workload): atoll does not set it.
const RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"

// claimKeys are control-plane bookkeeping that must not reach members.
var claimKeys = []string{
	policyv1alpha1.PropagationPolicyPermanentIDLabel,
	policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
	policyv1alpha1.PropagationPolicyNamespaceAnnotation,
	policyv1alpha1.PropagationPolicyNameAnnotation,
	policyv1alpha1.ClusterPropagationPolicyAnnotation,
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
}

// dataKinds hold data that outlives the workloads using them. atoll never
// deletes a member copy of one as a side effect (a workload moving, failing
// over or being re-created); only deleting its own template does.
var dataKinds = map[schema.GroupKind]bool{
	{Kind: "PersistentVolumeClaim"}:                            true,
	{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}: true,
}

// HoldsData reports whether objects of kind gk hold data (see dataKinds).
func HoldsData(gk schema.GroupKind) bool { return dataKinds[gk] }

// HasReplicas reports whether kind carries spec.replicas that atoll divides.
func HasReplicas(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"},
		schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return true
	}
	return false
}

// Render returns the manifest of template for one member cluster: identity,
// labels, annotations and spec-like fields, without status, server-set
// metadata, control-plane claim metadata, and the fields each kind's member
// allocates for itself (a Service's cluster IP, a Job's selector, …).
// replicas, when not nil, replaces spec.replicas of kinds that have it.
func Render(template *unstructured.Unstructured, replicas *int64) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range template.Object {
		switch k {
		case "metadata", "status":
			continue
		}
		out.Object[k] = deepCopy(v)
	}
	out.SetAPIVersion(template.GetAPIVersion())
	out.SetKind(template.GetKind())
	out.SetName(template.GetName())
	out.SetNamespace(template.GetNamespace())
	labels, annotations := template.GetLabels(), template.GetAnnotations()
	for _, k := range claimKeys {
		delete(labels, k)
		delete(annotations, k)
	}
	if len(labels) > 0 {
		out.SetLabels(labels)
	}
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	gk := out.GroupVersionKind().GroupKind()
	prune(gk, out)
	if HasReplicas(gk) {
		if RetainsReplicas(template) {
			unstructured.RemoveNestedField(out.Object, "spec", "replicas")
		} else if replicas != nil {
			_ = unstructured.SetNestedField(out.Object, *replicas, "spec", "replicas")
		}
	}
	return out
}

// RetainsReplicas reports whether the members own spec.replicas of this
// template (a member HPA scales it).
func RetainsReplicas(template *unstructured.Unstructured) bool {
	_, retain := template.GetLabels()[RetainReplicasLabel]
	return retain && HasReplicas(template.GroupVersionKind().GroupKind())
}

// prune drops the fields a member allocates or owns for kind.
func prune(gk schema.GroupKind, obj *unstructured.Unstructured) {
	switch gk {
	case schema.GroupKind{Kind: "Service"}:
		for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort", "ipFamilies", "ipFamilyPolicy"} {
			unstructured.RemoveNestedField(obj.Object, "spec", f)
		}
		if ports, ok, _ := unstructured.NestedSlice(obj.Object, "spec", "ports"); ok {
			for _, p := range ports {
				if m, ok := p.(map[string]any); ok {
					delete(m, "nodePort")
				}
			}
			_ = unstructured.SetNestedSlice(obj.Object, ports, "spec", "ports")
		}
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		unstructured.RemoveNestedField(obj.Object, "spec", "volumeName")
	case schema.GroupKind{Kind: "Pod"}:
		unstructured.RemoveNestedField(obj.Object, "spec", "nodeName")
	case schema.GroupKind{Kind: "ServiceAccount"}:
		delete(obj.Object, "secrets")
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		// The member's job controller generates the selector and labels
		// from its own UID.
		unstructured.RemoveNestedField(obj.Object, "spec", "selector")
		for _, k := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
			unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels", k)
		}
	}
}

// Hash is a stable digest of a manifest.
func Hash(obj *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(obj.Object) // map keys are sorted by encoding/json
	if err != nil {
		return "", fmt.Errorf("hashing %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// Drifted reports whether live no longer holds what desired sets: every
// field of desired (apart from metadata other than labels and annotations)
// must be present in live with an equal value. Fields only live has (member
// defaults, status, fields other managers own) are not drift.
func Drifted(desired, live *unstructured.Unstructured) (bool, string) {
	for k, v := range desired.Object {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			for _, f := range []string{"labels", "annotations"} {
				want, _, _ := unstructured.NestedStringMap(desired.Object, "metadata", f)
				got, _, _ := unstructured.NestedStringMap(live.Object, "metadata", f)
				for key, val := range want {
					if got[key] != val {
						return true, "metadata." + f + "." + key
					}
				}
			}
			continue
		}
		if path, ok := contains(live.Object[k], v, k); !ok {
			return true, path
		}
	}
	return false, ""
}

// contains reports whether got holds want (maps: every key of want; lists:
// same length, element-wise), and where it does not.
func contains(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			if p, ok := contains(g[k], wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := contains(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case nil:
		return "", true
	default:
		if equalScalar(got, want) {
			return "", true
		}
		return path, false
	}
}

func equalScalar(got, want any) bool {
	if got == want {
		return true
	}
	// JSON numbers decode as int64 or float64 depending on their text.
	gf, gok := toFloat(got)
	wf, wok := toFloat(want)
	if gok && wok {
		return gf == wf
	}
	gs, gok := got.(string)
	ws, wok := want.(string)
	return gok && wok && quantityEqual(gs, ws)
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

func deepCopy(v any) any {
	return runtimeDeepCopy(v)
}
