package interpreter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/atoll-dev/atoll/pkg/util/jsonvalue"
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

// Hash is a stable digest of a manifest: of its encoding/json encoding
// (map keys sorted), which member copies' manifest-hash annotations were
// computed from, written by jsonvalue.Append with the same bytes and
// without reflection (every copy is hashed again after a restart).
func Hash(obj *unstructured.Unstructured) (string, error) {
	buf := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(buf)
	data, err := jsonvalue.Append((*buf)[:0], obj.Object)
	*buf = data
	if err != nil {
		return "", fmt.Errorf("hashing %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// hashBuffers are Hash's encoding buffers, reused: a manifest's encoding
// is hashed and dropped.
var hashBuffers = sync.Pool{New: func() any { return new([]byte) }}

// Drifted reports whether live no longer holds what desired sets: every
// field of desired (apart from metadata other than labels and annotations)
// must be present in live with an equal value. Fields only live has (member
// defaults, status, fields other managers own) are not drift. It copies
// no maps and builds a field's path only once it found drift (every copy
// is checked after a restart).
func Drifted(desired, live *unstructured.Unstructured) (bool, string) {
	for k, v := range desired.Object {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			for _, f := range []string{"labels", "annotations"} {
				want := stringMap(desired.Object, f)
				got := stringMap(live.Object, f)
				for key, val := range want {
					if g, _ := got[key].(string); g != val.(string) {
						return true, "metadata." + f + "." + key
					}
				}
			}
			continue
		}
		if ok, path := contains(live.Object[k], v); !ok {
			return true, k + path
		}
	}
	return false, ""
}

// stringMap is obj's metadata.<field> when it is a map of strings (as
// unstructured.NestedStringMap, without copying it), else nil.
func stringMap(obj map[string]any, field string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, "metadata", field)
	m, _ := v.(map[string]any)
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return nil
		}
	}
	return m
}

// contains reports whether got holds want (maps: every key of want; lists:
// same length, element-wise), and when it does not, where below them
// (".key" and "[i]" steps, built only then).
func contains(got, want any) (bool, string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false, ""
		}
		for k, wv := range w {
			if ok, p := contains(g[k], wv); !ok {
				return false, "." + k + p
			}
		}
		return true, ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false, ""
		}
		for i := range w {
			if ok, p := contains(g[i], w[i]); !ok {
				return false, "[" + strconv.Itoa(i) + "]" + p
			}
		}
		return true, ""
	case nil:
		return true, ""
	default:
		return equalScalar(got, want), ""
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
