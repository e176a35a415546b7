package baseline

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var doodadsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "doodads"}

// TestCustomResourceWaitsForItsAPI: a custom resource propagated by a
// PropagationPolicy to a cluster that does not serve its kind yet lands
// there once a baseline delivers its CRD: the scheduler re-queues the
// binding when the cluster's API enablements change (Karmada loses it,
// karmada#3479).
func TestCustomResourceWaitsForItsAPI(t *testing.T) {
	joinFirstMembers(t)
	applyManifest(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: doodads.example.com}
spec:
  group: example.com
  names: {kind: Doodad, plural: doodads, singular: doodad}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`)
	applyManifest(t, `
apiVersion: example.com/v1
kind: Doodad
metadata: {name: one, namespace: default}
spec: {size: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: doodad, namespace: default}
spec:
  resourceSelectors: [{apiVersion: example.com/v1, kind: Doodad, name: one}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`)
	t.Cleanup(func() {
		_, _ = world.Kubectl(t, "", "delete", "doodad", "-n", "default", "one", "--ignore-not-found", "--wait")
		_, _ = world.Kubectl(t, "", "delete", "propagationpolicy", "-n", "default", "doodad", "--ignore-not-found")
		deleteBaseline(t, "doodad-api")
	})
	time.Sleep(5 * time.Second)
	if !memberObjectGone(t, "member2", doodadsGVR, "default", "one") {
		t.Fatal("the Doodad reached member2 before its CRD")
	}
	applyManifest(t, `
apiVersion: apps.atoll.dev/v1alpha1
kind: ClusterBaseline
metadata: {name: doodad-api}
spec:
  clusterSelector: {matchLabels: {member: member2}}
  components:
  - name: crd
    resourceSelectors: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: doodads.example.com}]
`)
	waitMemberObject(t, "member2", doodadsGVR, "default", "one")
}
