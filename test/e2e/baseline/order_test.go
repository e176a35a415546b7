package baseline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

var gizmosGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}

// gizmoManifest is a CRD → operator → custom resource chain on member1,
// plus a PersistentVolumeClaim (data) and a ConfigMap that member1
// already has as its own object.
func gizmoManifest(crdField, image string, size int) string {
	return strings.NewReplacer("CRDFIELD", crdField, "IMAGE", image, "SIZE", strconv.Itoa(size)).Replace(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos, singular: gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              CRDFIELD: {type: string}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gizmo-operator, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: gizmo-operator}}
  template:
    metadata: {labels: {app: gizmo-operator}}
    spec:
      containers: [{name: op, image: IMAGE}]
---
apiVersion: example.com/v1
kind: Gizmo
metadata: {name: main, namespace: default}
spec: {size: SIZE}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: gizmo-data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gizmo-settings, namespace: default}
data: {owner: federation}
---
apiVersion: apps.atoll.dev/v1alpha1
kind: ClusterBaseline
metadata: {name: gizmo}
spec:
  clusterSelector: {matchLabels: {member: member1}}
  components:
  - name: crd
    resourceSelectors: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: gizmos.example.com}]
  - name: operator
    dependsOn: [crd]
    resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: default, name: gizmo-operator}]
  - name: gizmo
    dependsOn: [operator]
    readinessExpression: "has(self.spec.size)"
    resourceSelectors: [{apiVersion: example.com/v1, kind: Gizmo, namespace: default, name: main}]
  - name: data
    dependsOn: [crd]
    readinessExpression: "true"
    resourceSelectors: [{apiVersion: v1, kind: PersistentVolumeClaim, namespace: default, name: gizmo-data}]
  - name: settings
    timeout: 10s
    resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: gizmo-settings}]
`)
}

// TestUpgradeAndWithdrawalInOrder: a change of the CRD, the operator's
// image and the custom resource, applied at once, reaches the member in
// dependency order (the operator after the CRD change, the custom
// resource after the operator rolled out); deleting the baseline
// withdraws in reverse order, leaves the member's own ConfigMap alone
// (never taken over) and keeps the PersistentVolumeClaim (it holds data).
func TestUpgradeAndWithdrawalInOrder(t *testing.T) {
	joinFirstMembers(t)
	ctx := context.Background()
	// member1's own object of the same name: the baseline must neither
	// take it over nor delete it.
	if out, err := world.MemberKubectl(t, "member1", `
apiVersion: v1
kind: ConfigMap
metadata: {name: gizmo-settings, namespace: default}
data: {owner: member}
`, "apply", "-f", "-"); err != nil {
		t.Fatalf("creating member1's own ConfigMap: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = world.MemberKubectl(t, "member1", "", "delete", "configmap", "-n", "default", "gizmo-settings", "--ignore-not-found")
	})
	applyManifest(t, gizmoManifest("color", "example.com/gizmo-operator:v1", 1))
	t.Cleanup(func() {
		deleteBaseline(t, "gizmo")
		_, _ = world.MemberKubectl(t, "member1", "", "delete", "pvc", "-n", "default", "gizmo-data", "--ignore-not-found", "--wait=false")
	})
	cb := waitBaseline(t, "gizmo", 2*time.Minute, "gizmo Ready, settings Failed (member1 has its own)", func(cb *appsv1alpha1.ClusterBaseline) bool {
		return component(cb, "member1", "gizmo").State == appsv1alpha1.ComponentReady &&
			component(cb, "member1", "data").State == appsv1alpha1.ComponentReady &&
			component(cb, "member1", "settings").State == appsv1alpha1.ComponentFailed
	})
	if msg := component(cb, "member1", "settings").Message; !strings.Contains(msg, "not ready within 10s") {
		t.Errorf("settings' message: %q", msg)
	}

	rec := record(t, "member1", "", crdsGVR, deploymentsGVR, gizmosGVR, configMapsGVR, pvcsGVR)
	time.Sleep(time.Second) // let the watches start
	applyManifest(t, gizmoManifest("shade", "example.com/gizmo-operator:v2", 2))
	framework.Eventually(t, 2*time.Minute, "member1's Gizmo has size 2", func() (bool, string) {
		return rec.first(gizmosGVR, "main", func(e event) bool { return specInt(e.obj, "size") == 2 }) > 0, ""
	})
	crdChanged := rec.first(crdsGVR, "gizmos.example.com", func(e event) bool { return hasSchemaField(e.obj, "shade") })
	operatorChanged := rec.first(deploymentsGVR, "gizmo-operator", func(e event) bool { return image(e.obj) == "example.com/gizmo-operator:v2" })
	operatorRolledOut := rec.first(deploymentsGVR, "gizmo-operator", func(e event) bool {
		return image(e.obj) == "example.com/gizmo-operator:v2" && rolledOut(e.obj)
	})
	gizmoChanged := rec.first(gizmosGVR, "main", func(e event) bool { return specInt(e.obj, "size") == 2 })
	t.Logf("member1 revisions: CRD changed %d, operator changed %d, rolled out %d, Gizmo changed %d", crdChanged, operatorChanged, operatorRolledOut, gizmoChanged)
	if crdChanged == 0 || operatorChanged == 0 || operatorRolledOut == 0 {
		t.Fatalf("missing events: CRD %d, operator %d, rolled out %d", crdChanged, operatorChanged, operatorRolledOut)
	}
	if operatorChanged < crdChanged {
		t.Errorf("the operator's new image (revision %d) reached member1 before the CRD change it depends on (revision %d)", operatorChanged, crdChanged)
	}
	if gizmoChanged < operatorRolledOut {
		t.Errorf("the Gizmo change (revision %d) reached member1 before the operator it depends on had rolled out (revision %d)", gizmoChanged, operatorRolledOut)
	}

	deleteBaseline(t, "gizmo")
	// The baseline is gone once the executor's DELETEs are answered; an
	// object with finalizers (the CRD's customresourcecleanup) goes from
	// the member a moment later. The order is that of the deletions'
	// beginnings: the first event that shows the object going.
	begun := func(gvr schema.GroupVersionResource, name string) int64 {
		return rec.first(gvr, name, func(e event) bool { return e.typ == watch.Deleted || e.obj.GetDeletionTimestamp() != nil })
	}
	deleted := func(gvr schema.GroupVersionResource, name string) int64 {
		return rec.first(gvr, name, func(e event) bool { return e.typ == watch.Deleted })
	}
	framework.Eventually(t, time.Minute, "the Gizmo, the operator and the CRD deleted from member1", func() (bool, string) {
		gizmo, operator, crd := deleted(gizmosGVR, "main"), deleted(deploymentsGVR, "gizmo-operator"), deleted(crdsGVR, "gizmos.example.com")
		return gizmo > 0 && operator > 0 && crd > 0, fmt.Sprintf("deleted at revisions: Gizmo %d, operator %d, CRD %d", gizmo, operator, crd)
	})
	gizmoGone, operatorGone, crdGone := begun(gizmosGVR, "main"), begun(deploymentsGVR, "gizmo-operator"), begun(crdsGVR, "gizmos.example.com")
	t.Logf("member1 deletions begun: Gizmo %d, operator %d, CRD %d", gizmoGone, operatorGone, crdGone)
	if gizmoGone >= operatorGone || operatorGone >= crdGone {
		t.Errorf("withdrawal out of reverse dependency order: Gizmo %d, operator %d, CRD %d", gizmoGone, operatorGone, crdGone)
	}
	m1 := world.MemberDynamic(t, "member1")
	own, err := m1.Resource(configMapsGVR).Namespace("default").Get(ctx, "gizmo-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("member1's own ConfigMap is gone: %v", err)
	}
	if v, _, _ := unstructured.NestedString(own.Object, "data", "owner"); v != "member" {
		t.Errorf("member1's own ConfigMap was overwritten: owner=%q", v)
	}
	if _, err := m1.Resource(pvcsGVR).Namespace("default").Get(ctx, "gizmo-data", metav1.GetOptions{}); err != nil {
		t.Errorf("the PersistentVolumeClaim (data) was deleted with the baseline: %v", err)
	}
}

func specInt(u *unstructured.Unstructured, field string) int64 {
	v, _, _ := unstructured.NestedInt64(u.Object, "spec", field)
	return v
}

func image(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

// rolledOut: the Deployment's controller observed its spec and every
// replica is updated and available.
func rolledOut(u *unstructured.Unstructured) bool {
	gen := u.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	want, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	available, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	total, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	return observed >= gen && updated == want && available == want && total == want
}

func hasSchemaField(u *unstructured.Unstructured, field string) bool {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		_, ok, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", field)
		if ok {
			return true
		}
	}
	return false
}
