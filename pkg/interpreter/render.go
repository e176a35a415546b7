package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// controlPlaneKeys are metadata of the control plane's copy that must not
// reach members: a client's last applied configuration and the revision
// the control plane's own controllers would stamp. The claim metadata
// (which policy claims the template: propagationpolicy.karmada.io/name,
// /namespace, the permanent-id labels) does reach them, as in Karmada,
// whose users and tests read it on member objects.
var controlPlaneKeys = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
}

// render returns the manifest of template for one member cluster: identity,
// labels, annotations and spec-like fields, without status, server-set
// metadata, control-plane-only metadata, and the fields each kind's member
// allocates for itself (a Service's cluster IP, a Job's selector, …).
func render(template *unstructured.Unstructured) *unstructured.Unstructured {
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
	for _, k := range controlPlaneKeys {
		delete(labels, k)
		delete(annotations, k)
	}
	if len(labels) > 0 {
		out.SetLabels(labels)
	}
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	if k, ok := kinds[out.GroupVersionKind().GroupKind()]; ok && k.prune != nil {
		k.prune(out)
	}
	return out
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

func deepCopy(v any) any { return runtime.DeepCopyJSONValue(v) }

// quantityEqual treats "1" and "1000m" as equal when both parse as
// quantities; the member API server may normalise what the template said.
func quantityEqual(a, b string) bool {
	if a == b {
		return true
	}
	qa, err1 := resource.ParseQuantity(a)
	qb, err2 := resource.ParseQuantity(b)
	return err1 == nil && err2 == nil && qa.Cmp(qb) == 0
}
