package clustercache

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecodeObjectKeepsWhatReadersNeed(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42", "generation": int64(3),
			"labels": map[string]any{"karmada.io/managed": "true"},
			"annotations": map[string]any{
				"resourcebinding.karmada.io/namespace": "shop", "resourcebinding.karmada.io/name": "web-deployment",
				"resourcetemplate.karmada.io/managed-annotations": "a,b", "atoll.dev/manifest-hash": "h1",
			},
			"managedFields": []any{map[string]any{"manager": "atoll", "operation": "Apply"}},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
	o, err := decodeObject(mustJSON(t, u.Object))
	if err != nil {
		t.Fatal(err)
	}
	// Of labels and annotations only the owner's values stay beside the JSON.
	wantMeta := metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1", ResourceVersion: "42", Generation: 3}
	if diff := cmp.Diff(wantMeta, metaOf(o)); diff != "" {
		t.Errorf("metadata kept (-want +got):\n%s", diff)
	}
	wantOwner := map[string]string{"resourcebinding.karmada.io/namespace": "shop", "resourcebinding.karmada.io/name": "web-deployment"}
	if diff := cmp.Diff(wantOwner, o.GetAnnotations()); diff != "" {
		t.Errorf("owner annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantOwner, o.DeepCopyObject().(*Object).GetAnnotations()); diff != "" {
		t.Errorf("owner annotations of a copy (-want +got):\n%s", diff)
	}
	// The decoded object has all of them.
	live := Live(o)
	want := u.DeepCopy()
	want.SetManagedFields(nil)
	if diff := cmp.Diff(want.Object, live.Object); diff != "" {
		t.Errorf("decoded object (-want +got):\n%s", diff)
	}
	// What a reconcile does to its decoded copy does not reach the cache.
	live.SetLabels(nil)
	if again := Live(o.DeepCopyObject()); again.GetLabels()["karmada.io/managed"] != "true" {
		t.Error("a change to a decoded copy reached the cached object")
	}
}

func TestDecodeObjectOwnerAnnotations(t *testing.T) {
	obj := func(annotations map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": "x"}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}}
	}
	cases := map[string]struct {
		annotations map[string]any
		want        map[string]string
	}{
		"none":                {nil, nil},
		"no owner among them": {map[string]any{"a": "b"}, nil},
		"cluster binding": {map[string]any{"clusterresourcebinding.karmada.io/name": "ns-namespace", "a": "b"},
			map[string]string{"clusterresourcebinding.karmada.io/name": "ns-namespace"}},
		"not a string is not kept": {map[string]any{"resourcebinding.karmada.io/name": int64(3)}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := decodeObject(mustJSON(t, obj(tc.annotations).Object))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, o.GetAnnotations()); diff != "" {
				t.Errorf("annotations kept (-want +got):\n%s", diff)
			}
			if o.GetLabels() != nil {
				t.Errorf("labels kept: %v", o.GetLabels())
			}
		})
	}
}

func TestObjectSetAnnotationsKeepsTheOwner(t *testing.T) {
	o := &Object{}
	o.SetAnnotations(map[string]string{"clusterresourcebinding.karmada.io/name": "ns-namespace", "other": "x"})
	want := map[string]string{"clusterresourcebinding.karmada.io/name": "ns-namespace"}
	if diff := cmp.Diff(want, o.GetAnnotations()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Through the metav1.Object interface too, as event handlers read it.
	var m metav1.Object = o
	if diff := cmp.Diff(want, m.GetAnnotations()); diff != "" {
		t.Errorf("through metav1.Object (-want +got):\n%s", diff)
	}
}

// metaOf is what o keeps of an object's metadata, as an ObjectMeta.
func metaOf(o *Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
		Generation: o.GetGeneration(), DeletionTimestamp: o.GetDeletionTimestamp(), Labels: o.GetLabels()}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
