package propagation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var (
	gizmos = schema.GroupVersionResource{Group: "e2e.example.com", Version: "v1", Resource: "gizmos"}
	crds   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// gizmoCRD is the CRD as unstructured (the e2e client's scheme has no
// apiextensions types).
func gizmoCRD() *unstructured.Unstructured {
	return schemalessCRD("e2e.example.com", "v1", "Gizmo", "gizmos")
}

// schemalessCRD is a namespaced CRD of one served version whose objects
// keep every field.
func schemalessCRD(group, version, kind, plural string) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTrue(),
				}}}},
		},
	})
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func ptrTrue() *bool { b := true; return &b }

func gizmo(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"size": int64(3)},
	}}
	return u
}

func exists(ctx context.Context, ri dynamic.ResourceInterface, name string) (bool, string) {
	_, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, "not found"
	}
	return err == nil, fmt.Sprint(err)
}

// TestCRDPropagation: a CustomResourceDefinition is a template like any
// other (Karmada propagates CRDs; it was on atoll's skip list): it reaches
// both members, and a custom resource of it lands once the members serve
// the API. Deleting the templates withdraws the custom resource first and
// then the CRD, except where deleting the CRD would delete data atoll does
// not own: in member2 a Gizmo of the member's own keeps the CRD there
// (handed back), and that Gizmo survives.
func TestCRDPropagation(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	const ns = "crds"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c, gizmoCRD(),
		utiltesting.MakePropagationPolicy("gizmo-crd", "").Select("apiextensions.k8s.io/v1", "CustomResourceDefinition", "gizmos.e2e.example.com").
			ClusterNames(members...).ClusterObj(),
		utiltesting.MakePropagationPolicy("gizmos", ns).Select("e2e.example.com/v1", "Gizmo", "").ClusterNames(members...).Obj())
	// The control plane serves the kind once the CRD is established.
	framework.Eventually(t, time.Minute, "the control plane serves gizmos", func() (bool, string) {
		err := c.Create(ctx, gizmo(ns, "shared"))
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	for _, m := range members {
		d := world.MemberDynamic(t, m)
		framework.Eventually(t, 2*time.Minute, "the CRD and the Gizmo in "+m, func() (bool, string) {
			if ok, why := exists(ctx, d.Resource(crds), "gizmos.e2e.example.com"); !ok {
				return false, "CRD: " + why
			}
			ok, why := exists(ctx, d.Resource(gizmos).Namespace(ns), "shared")
			return ok, "Gizmo: " + why
		})
	}

	// member2 has a Gizmo of its own.
	local := gizmo(ns, "local")
	if _, err := world.MemberDynamic(t, "member2").Resource(gizmos).Namespace(ns).Create(ctx, local, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating member2's own Gizmo: %v", err)
	}

	if err := c.Delete(ctx, gizmoCRD()); err != nil {
		t.Fatalf("deleting the CRD template: %v", err)
	}
	d1, d2 := world.MemberDynamic(t, "member1"), world.MemberDynamic(t, "member2")
	framework.Eventually(t, 2*time.Minute, "member1: Gizmo and then CRD withdrawn", func() (bool, string) {
		if ok, _ := exists(ctx, d1.Resource(gizmos).Namespace(ns), "shared"); ok {
			return false, "Gizmo still there"
		}
		ok, why := exists(ctx, d1.Resource(crds), "gizmos.e2e.example.com")
		return !ok, "CRD: " + why
	})
	framework.Eventually(t, 2*time.Minute, "member2: atoll's Gizmo withdrawn, the CRD handed back", func() (bool, string) {
		if ok, _ := exists(ctx, d2.Resource(gizmos).Namespace(ns), "shared"); ok {
			return false, "atoll's Gizmo still there"
		}
		crd, err := d2.Resource(crds).Get(ctx, "gizmos.e2e.example.com", metav1.GetOptions{})
		if err != nil {
			return false, "CRD: " + err.Error()
		}
		_, managed := crd.GetLabels()["karmada.io/managed"]
		return !managed, fmt.Sprintf("CRD labels %v", crd.GetLabels())
	})
	framework.Consistently(t, 10*time.Second, "member2 keeps its CRD and its own Gizmo", func() (bool, string) {
		if ok, why := exists(ctx, d2.Resource(crds), "gizmos.e2e.example.com"); !ok {
			return false, "CRD: " + why
		}
		ok, why := exists(ctx, d2.Resource(gizmos).Namespace(ns), "local")
		return ok, "own Gizmo: " + why
	})
}

// TestCRDInAKarmadaNamedGroup: a user's CRD whose group ends in karmada.io
// (Karmada's own e2e suite names its test CRDs example-<random>.karmada.io)
// is a template like any other; only Karmada's and atoll's own API groups
// are skipped. It used to be skipped with all of *.karmada.io.
func TestCRDInAKarmadaNamedGroup(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	const name = "widgets.example-e2e.karmada.io"
	crd := gizmoCRD()
	crd.SetName(name)
	_ = unstructured.SetNestedField(crd.Object, "example-e2e.karmada.io", "spec", "group")
	_ = unstructured.SetNestedStringMap(crd.Object, map[string]string{
		"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}, "spec", "names")
	framework.Create(t, c, crd,
		utiltesting.MakePropagationPolicy("karmada-named-crd", "").Select("apiextensions.k8s.io/v1", "CustomResourceDefinition", name).
			ClusterNames(members...).ClusterObj())
	for _, m := range members {
		d := world.MemberDynamic(t, m)
		framework.Eventually(t, 2*time.Minute, "the CRD in "+m, func() (bool, string) {
			return exists(ctx, d.Resource(crds), name)
		})
	}
	if err := c.Delete(ctx, crd); err != nil {
		t.Fatalf("deleting the CRD template: %v", err)
	}
	for _, m := range members {
		d := world.MemberDynamic(t, m)
		framework.Eventually(t, 2*time.Minute, "the CRD withdrawn from "+m, func() (bool, string) {
			ok, why := exists(ctx, d.Resource(crds), name)
			return !ok, why
		})
	}
}

// TestFieldAMemberDoesNotKnowIsNamed: atoll applies with the members' field
// validation off (design 0013, decision 49), which spares each member a
// second parse of the body. A field a member's API does not know still
// fails the apply there (server-side apply builds a typed object from the
// body whatever the validation), and the binding status names it: member1
// serves the Widget CRD with a schema that has spec.size only, member2
// keeps every field. member2 gets the Widget; member1's entry is not
// applied and names spec.color, and member1 has no Widget.
func TestFieldAMemberDoesNotKnowIsNamed(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	const ns, group = "unknown-fields", "skew.example.com"
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c, schemalessCRD(group, "v1", "Widget", "widgets"))
	if _, err := world.MemberDynamic(t, "member1").Resource(crds).Create(ctx, sizeOnlyCRD(group, "v1", "Widget", "widgets"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating member1's Widget CRD: %v", err)
	}
	if _, err := world.MemberDynamic(t, "member2").Resource(crds).Create(ctx, schemalessCRD(group, "v1", "Widget", "widgets"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating member2's Widget CRD: %v", err)
	}
	framework.Create(t, c, utiltesting.MakePropagationPolicy("widgets", ns).Select(group+"/v1", "Widget", "").ClusterNames(members...).Obj())
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": "w"},
		"spec":     map[string]any{"size": int64(3), "color": "blue"},
	}}
	framework.Eventually(t, time.Minute, "the control plane serves widgets", func() (bool, string) {
		err := c.Create(ctx, widget.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	framework.Eventually(t, 2*time.Minute, "the Widget in member2", func() (bool, string) {
		return exists(ctx, world.MemberDynamic(t, "member2").Resource(widgets).Namespace(ns), "w")
	})
	framework.Eventually(t, time.Minute, "member1's entry names the field it does not know", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Widget", "w"))
		if err != nil {
			return false, err.Error()
		}
		m1, m2 := framework.AggregatedStatusOf(rb, "member1"), framework.AggregatedStatusOf(rb, "member2")
		if m1 == nil || m2 == nil {
			return false, fmt.Sprintf("entries %+v", rb.Status.AggregatedStatus)
		}
		ok := !m1.Applied && strings.Contains(m1.AppliedMessage, ".spec.color") && m2.Applied
		return ok, fmt.Sprintf("member1 %+v; member2 %+v", *m1, *m2)
	})
	if ok, _ := exists(ctx, world.MemberDynamic(t, "member1").Resource(widgets).Namespace(ns), "w"); ok {
		t.Error("member1 has a Widget: it was applied without the field it does not know")
	}
}

// sizeOnlyCRD is a namespaced CRD whose schema knows spec.size only: the
// API server prunes every other field.
func sizeOnlyCRD(group, version, kind, plural string) *unstructured.Unstructured {
	crd := schemalessCRD(group, version, kind, plural)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}},
	}}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	_ = unstructured.SetNestedField(versions[0].(map[string]any), schema, "schema", "openAPIV3Schema")
	_ = unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
	return crd
}

// TestCRDThatServesNoVersionIsKept: a CRD whose template stops serving its
// only version (the API server accepts a CRD that serves none) still has
// its objects stored in the members, where atoll cannot list them. Deleting
// the template then hands the member CRDs back instead of deleting them
// with what is stored under them: member2's own Relic is there again once
// its CRD serves v1 again. Before, a CRD that served no version counted as
// one nothing used, and went with member2's Relic.
func TestCRDThatServesNoVersionIsKept(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	const name = "relics.unserved.example.com"
	relics := schema.GroupVersionResource{Group: "unserved.example.com", Version: "v1", Resource: "relics"}
	framework.CreateAndCleanup(t, c, schemalessCRD(relics.Group, relics.Version, "Relic", relics.Resource),
		utiltesting.MakePropagationPolicy("relic-crd", "").Select("apiextensions.k8s.io/v1", "CustomResourceDefinition", name).
			ClusterNames(members...).ClusterObj())
	for _, m := range members {
		t.Cleanup(func() {
			_ = world.MemberDynamic(t, m).Resource(crds).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	d2 := world.MemberDynamic(t, "member2")
	local := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "unserved.example.com/v1", "kind": "Relic",
		"metadata": map[string]any{"namespace": "default", "name": "local"}, "spec": map[string]any{"age": int64(3)}}}
	framework.Eventually(t, 2*time.Minute, "member2 serves relics and holds its own", func() (bool, string) {
		_, err := d2.Resource(relics).Namespace("default").Create(ctx, local, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})

	// The template stops serving v1; the members' CRDs follow.
	unserve := []byte(`[{"op": "replace", "path": "/spec/versions/0/served", "value": false}]`)
	template := schemalessCRD(relics.Group, relics.Version, "Relic", relics.Resource)
	if err := c.Patch(ctx, template, client.RawPatch(types.JSONPatchType, unserve)); err != nil {
		t.Fatalf("unserving the template's v1: %v", err)
	}
	for _, m := range members {
		framework.Eventually(t, time.Minute, m+": the CRD serves no version", func() (bool, string) {
			crd, err := world.MemberDynamic(t, m).Resource(crds).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			served := len(versions) == 1 && versions[0].(map[string]any)["served"] == true
			return !served, fmt.Sprintf("versions %v", versions)
		})
	}

	if err := c.Delete(ctx, template); err != nil {
		t.Fatalf("deleting the CRD template: %v", err)
	}
	for _, m := range members {
		framework.Eventually(t, 2*time.Minute, m+": the CRD handed back", func() (bool, string) {
			crd, err := world.MemberDynamic(t, m).Resource(crds).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "CRD: " + err.Error()
			}
			_, managed := crd.GetLabels()["karmada.io/managed"]
			return !managed && crd.GetDeletionTimestamp() == nil, fmt.Sprintf("CRD labels %v", crd.GetLabels())
		})
	}
	framework.Consistently(t, 10*time.Second, "both members keep the CRD", func() (bool, string) {
		for _, m := range members {
			if ok, why := exists(ctx, world.MemberDynamic(t, m).Resource(crds), name); !ok {
				return false, m + ": " + why
			}
		}
		return true, ""
	})
	if _, err := d2.Resource(crds).Patch(ctx, name, types.JSONPatchType,
		[]byte(`[{"op": "replace", "path": "/spec/versions/0/served", "value": true}]`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("serving member2's v1 again: %v", err)
	}
	framework.Eventually(t, time.Minute, "member2's own Relic is still there", func() (bool, string) {
		return exists(ctx, d2.Resource(relics).Namespace("default"), "local")
	})
}
