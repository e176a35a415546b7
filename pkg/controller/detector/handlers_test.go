package detector

import (
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

func TestTemplateChanged(t *testing.T) {
	base := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "a", Namespace: "ns", UID: "u", Generation: 1, ResourceVersion: "5",
			Labels: map[string]string{"app": "a", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"},
		}}
	}
	now := metav1.Now()
	cases := map[string]struct {
		change func(m *metav1.PartialObjectMetadata)
		want   bool
	}{
		"status only": {func(m *metav1.PartialObjectMetadata) { m.ResourceVersion = "6" }, false},
		"spec":        {func(m *metav1.PartialObjectMetadata) { m.Generation = 2 }, true},
		"label":       {func(m *metav1.PartialObjectMetadata) { m.Labels["app"] = "b" }, true},
		"deleting":    {func(m *metav1.PartialObjectMetadata) { m.DeletionTimestamp = &now }, true},
		"claim removed": {func(m *metav1.PartialObjectMetadata) {
			delete(m.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
		}, true},
		"claim label added": {func(m *metav1.PartialObjectMetadata) {
			m.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = "id"
		}, true},
		"claim annotation changed": {func(m *metav1.PartialObjectMetadata) {
			m.Annotations = map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "c"}
		}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := templateChanged(base(), n); got != tc.want {
				t.Errorf("templateChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStripMetadata(t *testing.T) {
	yes := true
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "a", Labels: map[string]string{"app": "a"},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": "{...}",
			"note": "kept",
		},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		OwnerReferences: []metav1.OwnerReference{{UID: "o", Controller: &yes}},
		Finalizers:      []string{"f"},
	}}
	before := fingerprint(m)
	out, err := stripMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.ManagedFields != nil || got.OwnerReferences != nil || got.Finalizers != nil {
		t.Errorf("not stripped: %+v", got.ObjectMeta)
	}
	if len(got.Annotations) != 1 || got.Annotations["note"] != "kept" || got.Labels["app"] != "a" {
		t.Errorf("labels %v, annotations %v; want app=a, note=kept only", got.Labels, got.Annotations)
	}
	if after := fingerprint(got); after != before {
		t.Errorf("stripping changed the fingerprint")
	}
	if _, err := stripMetadata("not metadata"); err != nil {
		t.Errorf("other objects must pass through: %v", err)
	}
}

// Templates claimed by one policy share its name's copy; users' label
// values are not interned.
func TestStripMetadataSharesRepeatedStrings(t *testing.T) {
	template := func(name string) *metav1.PartialObjectMetadata {
		c := strings.Clone
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: c(name), Namespace: c("shop"),
			Labels:      map[string]string{c("app"): c(name)},
			Annotations: map[string]string{c(policyv1alpha1.PropagationPolicyNameAnnotation): c("all")}}}
	}
	a, _ := stripMetadata(template("web"))
	b, _ := stripMetadata(template("db"))
	x, y := a.(*metav1.PartialObjectMetadata), b.(*metav1.PartialObjectMetadata)
	same := func(s, t string) bool { return unsafe.StringData(s) == unsafe.StringData(t) }
	if !same(x.Namespace, y.Namespace) || !same(x.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation], y.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]) {
		t.Error("namespace or policy name not shared between templates")
	}
	if x.Labels["app"] != "web" || y.Labels["app"] != "db" {
		t.Errorf("labels changed: %v %v", x.Labels, y.Labels)
	}
	// Equal annotation maps are one map; different label maps are not.
	if reflect.ValueOf(x.Annotations).UnsafePointer() != reflect.ValueOf(y.Annotations).UnsafePointer() {
		t.Error("two templates' equal annotations are two maps")
	}
	if reflect.ValueOf(x.Labels).UnsafePointer() == reflect.ValueOf(y.Labels).UnsafePointer() {
		t.Error("two templates' different labels are one map")
	}
}

// client-go's streaming list runs the transform twice on one object: the
// second pass must not write to the maps the first one shared (run with
// -race; a write while other templates' transforms read the map was a
// fatal concurrent map access).
func TestStripMetadataTwiceWritesNoSharedMap(t *testing.T) {
	template := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop",
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "all",
				"kubectl.kubernetes.io/last-applied-configuration": "{}"}}}
	}
	first, _ := stripMetadata(template())
	shared := first.(*metav1.PartialObjectMetadata).Annotations
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				_ = maps.Equal(shared, map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "all"})
			}
		})
	}
	for range 200 {
		if _, err := stripMetadata(first); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if _, ok := shared["kubectl.kubernetes.io/last-applied-configuration"]; ok || len(shared) != 1 {
		t.Errorf("annotations after two passes: %v", shared)
	}
}
