package baseline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestNewClusterGetsBaselineInOrder delivers the 13-component example
// baseline (dependency depth 5) to two clusters, then joins a third: it is
// tainted from its first moment until its baseline is ready, a business
// Deployment placed on every cluster reaches it only after that, and on
// every cluster each component's objects were created only after its
// prerequisites were ready there.
func TestNewClusterGetsBaselineInOrder(t *testing.T) {
	joinFirstMembers(t)
	applyManifest(t, readFile(t, "../../../examples/baseline.yaml"))
	t.Cleanup(func() { deleteBaseline(t, "platform") })
	waitBaseline(t, "platform", 3*time.Minute, "ready on member1 and member2", func(cb *appsv1alpha1.ClusterBaseline) bool {
		return clusterStatus(cb, "member1").Ready == "13/13" && clusterStatus(cb, "member2").Ready == "13/13"
	})
	ctx := context.Background()
	c := world.Client(t)
	for _, m := range []string{"member1", "member2"} {
		cl, err := framework.GetCluster(ctx, c, m)
		if err != nil {
			t.Fatal(err)
		}
		if hasBaselineTaint(cl) {
			t.Errorf("%s ran before the baseline existed and must not be gated: taints %v", m, cl.Spec.Taints)
		}
	}

	// A business workload placed on every cluster.
	applyManifest(t, `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: example.com/web:v1, resources: {requests: {cpu: 10m}}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
`)
	t.Cleanup(func() {
		_, _ = world.Kubectl(t, "", "delete", "propagationpolicy", "-n", "shop", "web", "--ignore-not-found")
		_, _ = world.Kubectl(t, "", "delete", "deployment", "-n", "shop", "web", "--ignore-not-found")
	})
	for _, m := range []string{"member1", "member2"} {
		waitMemberObject(t, m, deploymentsGVR, "shop", "web")
	}

	out := join(t, "member3")
	if !strings.Contains(out, "waits for baselines platform") {
		t.Errorf("atoll join member3 does not say the cluster waits for its baseline:\n%s", out)
	}
	cl, err := framework.GetCluster(ctx, c, "member3")
	if err != nil {
		t.Fatal(err)
	}
	if !hasBaselineTaint(cl) {
		t.Fatalf("member3 was created without the baseline taint: %v", cl.Spec.Taints)
	}
	// Until member3's baseline is ready: the taint stays, and the business
	// Deployment stays away.
	m3 := world.MemberDynamic(t, "member3")
	joined := time.Now()
	var cb *appsv1alpha1.ClusterBaseline
	for {
		if time.Since(joined) > 4*time.Minute {
			t.Fatalf("member3's baseline not ready after 4m:\n%s", matrix(cb))
		}
		if cb, err = getBaseline(t, "platform"); err != nil {
			t.Fatal(err)
		}
		if clusterStatus(cb, "member3").BaselineReadyTime != nil {
			break
		}
		if cl, err = framework.GetCluster(ctx, c, "member3"); err == nil && !hasBaselineTaint(cl) {
			t.Fatalf("member3 lost its baseline taint before its baseline was ready:\n%s", matrix(cb))
		}
		if _, err := m3.Resource(deploymentsGVR).Namespace("shop").Get(ctx, "web", metav1.GetOptions{}); err == nil {
			t.Fatalf("the business Deployment reached member3 before its baseline was ready:\n%s", matrix(cb))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("member3: baseline ready %s after join (13 components, depth 5)", time.Since(joined).Round(time.Second))
	framework.Eventually(t, 30*time.Second, "member3's baseline taint removed", func() (bool, string) {
		cl, err := framework.GetCluster(ctx, c, "member3")
		if err != nil {
			return false, err.Error()
		}
		return !hasBaselineTaint(cl), fmt.Sprint("taints ", cl.Spec.Taints)
	})
	waitMemberObject(t, "member3", deploymentsGVR, "shop", "web")

	cb = waitBaseline(t, "platform", time.Minute, "ready on all three clusters", func(cb *appsv1alpha1.ClusterBaseline) bool {
		return cb.Status.ReadyClusters == "3/3" && meta.IsStatusConditionTrue(cb.Status.Conditions, "Ready")
	})
	for _, m := range []string{"member1", "member2", "member3"} {
		checkOrder(t, cb, m)
	}
	out = world.Atoll(t, "get", "baseline", "platform", "--kubeconfig", world.Kubeconfig)
	for _, want := range []string{"3/3 clusters ready", "member3   13/13", "default-widget", "Ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("atoll get baseline platform lacks %q:\n%s", want, out)
		}
	}
	if out := world.MustKubectl(t, "", "get", "clusterbaselines"); !strings.Contains(out, "3/3") {
		t.Errorf("kubectl get clusterbaselines:\n%s", out)
	}
}

// checkOrder checks, on one member, every dependsOn edge: each object of
// the dependent was created no earlier than its prerequisite became ready
// there, by the baseline's record and, for CRDs and Deployments, by the
// member's own condition (Established, Available).
func checkOrder(t *testing.T, cb *appsv1alpha1.ClusterBaseline, member string) {
	t.Helper()
	ctx := context.Background()
	dc := world.MemberDynamic(t, member)
	disc, err := discovery.NewDiscoveryClientForConfig(world.MemberConfig(t, member))
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	objects := func(c appsv1alpha1.BaselineComponent) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, s := range c.ResourceSelectors {
			gv, _ := schema.ParseGroupVersion(s.APIVersion)
			m, err := mapper.RESTMapping(gv.WithKind(s.Kind).GroupKind(), gv.Version)
			if err != nil {
				t.Errorf("%s: mapping %s: %v", member, s.Kind, err)
				continue
			}
			u, err := dc.Resource(m.Resource).Namespace(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s: %s %s/%s: %v", member, s.Kind, s.Namespace, s.Name, err)
				continue
			}
			out = append(out, u)
		}
		return out
	}
	byName := map[string]appsv1alpha1.BaselineComponent{}
	for _, c := range cb.Spec.Components {
		byName[c.Name] = c
	}
	edges := 0
	for _, c := range cb.Spec.Components {
		for _, dep := range c.DependsOn {
			ready := component(cb, member, dep).ReadyTime
			if ready == nil {
				t.Errorf("%s: %s has no readyTime", member, dep)
				continue
			}
			readyAt := ready.Time
			for _, p := range objects(byName[dep]) {
				if at, ok := conditionTime(p); ok && at.After(readyAt) {
					readyAt = at
				}
			}
			for _, o := range objects(c) {
				edges++
				if created := o.GetCreationTimestamp().Time; created.Before(readyAt) {
					t.Errorf("%s: %s %s (component %s) was created at %s, before its prerequisite %s was ready (%s)",
						member, o.GetKind(), o.GetName(), c.Name, created.Format(time.RFC3339), dep, readyAt.Format(time.RFC3339))
				}
			}
		}
	}
	t.Logf("%s: %d dependent objects checked against their prerequisites' readiness", member, edges)
}

// conditionTime is when a member object's own readiness condition last
// turned True: Established for CRDs, Available for Deployments.
func conditionTime(u *unstructured.Unstructured) (time.Time, bool) {
	want := map[string]string{"CustomResourceDefinition": "Established", "Deployment": "Available"}[u.GetKind()]
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == want && m["status"] == "True" {
			at, err := time.Parse(time.RFC3339, m["lastTransitionTime"].(string))
			return at, err == nil
		}
	}
	return time.Time{}, false
}

func waitMemberObject(t *testing.T, member string, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	dc := world.MemberDynamic(t, member)
	framework.Eventually(t, 2*time.Minute, member+": "+gvr.Resource+" "+ns+"/"+name+" exists", func() (bool, string) {
		_, err := dc.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

func memberObjectGone(t *testing.T, member string, gvr schema.GroupVersionResource, ns, name string) bool {
	t.Helper()
	_, err := world.MemberDynamic(t, member).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// TestFailingComponentBlocksOnlyItsDependents: a Deployment whose pods can
// never be scheduled is reported Failed after its timeout; its dependent
// waits (named in status) and is never delivered; the other branch
// completes on every cluster. A template a PropagationPolicy claimed first
// is reported, not fought over.
func TestFailingComponentBlocksOnlyItsDependents(t *testing.T) {
	joinFirstMembers(t)
	applyManifest(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: blocked-claimed, namespace: default}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: blocked-user, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: blocked-claimed}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
	framework.Eventually(t, time.Minute, "the user's policy claims blocked-claimed", func() (bool, string) {
		out, _ := world.Kubectl(t, "", "get", "configmap", "-n", "default", "blocked-claimed", "-o", "jsonpath={.metadata.annotations}")
		return strings.Contains(out, "blocked-user"), out
	})
	applyManifest(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: blocked-base, namespace: default}
data: {a: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: blocked-stuck, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: blocked-stuck}}
  template:
    metadata: {labels: {app: blocked-stuck}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: c, image: example.com/stuck:v1}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: blocked-after, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: blocked-side, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: blocked-side-2, namespace: default}
---
apiVersion: apps.atoll.dev/v1alpha1
kind: ClusterBaseline
metadata: {name: blocked}
spec:
  clusterSelector: {matchExpressions: [{key: member, operator: In, values: [member1, member2]}]}
  components:
  - {name: base, resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: blocked-base}]}
  - name: stuck
    dependsOn: [base]
    timeout: 15s
    resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: default, name: blocked-stuck}]
  - {name: after-stuck, dependsOn: [stuck], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: blocked-after}]}
  - {name: side, dependsOn: [base], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: blocked-side}]}
  - {name: side-2, dependsOn: [side], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: blocked-side-2}]}
  - {name: claimed, resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: blocked-claimed}]}
`)
	t.Cleanup(func() {
		deleteBaseline(t, "blocked")
		_, _ = world.Kubectl(t, "", "delete", "propagationpolicy", "-n", "default", "blocked-user", "--ignore-not-found")
	})
	cb := waitBaseline(t, "blocked", 2*time.Minute, "stuck Failed, the other branch Ready", func(cb *appsv1alpha1.ClusterBaseline) bool {
		for _, m := range []string{"member1", "member2"} {
			if component(cb, m, "stuck").State != appsv1alpha1.ComponentFailed || component(cb, m, "side-2").State != appsv1alpha1.ComponentReady {
				return false
			}
		}
		return true
	})
	for _, m := range []string{"member1", "member2"} {
		if st := component(cb, m, "stuck"); !strings.Contains(st.Message, "not ready within 15s") {
			t.Errorf("%s: stuck's message does not say it timed out: %q", m, st.Message)
		}
		if st := component(cb, m, "after-stuck"); st.State != appsv1alpha1.ComponentWaiting || st.Message != "Waiting for stuck" {
			t.Errorf("%s: after-stuck is %s %q, want Waiting \"Waiting for stuck\"", m, st.State, st.Message)
		}
		if !memberObjectGone(t, m, configMapsGVR, "default", "blocked-after") {
			t.Errorf("%s: the dependent of the failed component was delivered", m)
		}
	}
	// A template a PropagationPolicy claimed first is reported, not taken.
	if st := component(cb, "member1", "claimed"); st.State != appsv1alpha1.ComponentFailed ||
		!strings.Contains(st.Message, "is claimed by PropagationPolicy default/blocked-user; the baseline does not take it over") {
		t.Errorf("claimed: %s %q", st.State, st.Message)
	}
	cond := meta.FindStatusCondition(cb.Status.Conditions, "Ready")
	if cond == nil || cond.Reason != appsv1alpha1.BaselineReasonFailed || !strings.Contains(cond.Message, "stuck on member1") {
		t.Errorf("Ready condition does not name the blocker: %+v", cond)
	}
	if out := world.Atoll(t, "get", "baseline", "blocked", "--kubeconfig", world.Kubeconfig); !strings.Contains(out, "stuck(Failed)") || !strings.Contains(out, "Waiting for stuck") {
		t.Errorf("atoll get baseline blocked does not show the blocker:\n%s", out)
	}
}

// TestInvalidBaselineRefused: a dependency cycle and a dangling dependsOn
// are refused by the API server, the error naming the cycle path and the
// unknown component; nothing is created.
func TestInvalidBaselineRefused(t *testing.T) {
	out, err := world.Kubectl(t, `
apiVersion: apps.atoll.dev/v1alpha1
kind: ClusterBaseline
metadata: {name: invalid}
spec:
  components:
  - {name: a, dependsOn: [b], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: a}]}
  - {name: b, dependsOn: [c], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: b}]}
  - {name: c, dependsOn: [a, missing], resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: default, name: c}]}
`, "apply", "-f", "-")
	if err == nil {
		t.Fatalf("an invalid baseline was accepted:\n%s", out)
	}
	for _, want := range []string{"dependency cycle: a → b → c → a", `component "c" depends on unknown component "missing"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if _, err := getBaseline(t, "invalid"); !apierrors.IsNotFound(err) {
		t.Errorf("the invalid baseline exists: %v", err)
	}
	var policies policyv1alpha1.ClusterPropagationPolicyList
	if err := world.Client(t).List(context.Background(), &policies, client.MatchingLabels{appsv1alpha1.BaselineLabel: "invalid"}); err != nil || len(policies.Items) > 0 {
		t.Errorf("policies were generated for the invalid baseline: %d, %v", len(policies.Items), err)
	}
}
