package interpreter

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atoll-dev/atoll/test/framework"
)

const testdata = "../../testdata/interpreter/"

// installCRDs serves the example kinds in the control plane and in both
// members (CRD propagation is not what this suite tests).
func installCRDs(t *testing.T) {
	t.Helper()
	crds, err := os.ReadFile(testdata + "crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	world.MustKubectl(t, string(crds), "apply", "-f", "-")
	for _, m := range []string{"member1", "member2"} {
		if out, err := world.MemberKubectl(t, m, string(crds), "apply", "-f", "-"); err != nil {
			t.Fatalf("installing CRDs in %s: %v\n%s", m, err, out)
		}
	}
	for _, name := range []string{"rollouts.apps.example.io", "canaries.apps.example.io"} {
		world.MustKubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/"+name)
		for _, m := range []string{"member1", "member2"} {
			if out, err := world.MemberKubectl(t, m, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/"+name); err != nil {
				t.Fatalf("CRD %s in %s: %v\n%s", name, m, err, out)
			}
		}
	}
}

func applyFile(t *testing.T, file string) {
	t.Helper()
	world.MustKubectl(t, "", "apply", "-f", testdata+file)
}

// jsonpath reads a field with kubectl; "" when the object or field is
// missing.
func jsonpath(t *testing.T, member, path string, args ...string) string {
	t.Helper()
	args = append(args, "-o", "jsonpath="+path)
	var out string
	var err error
	if member == "" {
		out, err = world.Kubectl(t, "", append([]string{"get"}, args...)...)
	} else {
		out, err = world.MemberKubectl(t, member, "", append([]string{"get"}, args...)...)
	}
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// bindingClusters returns the binding's spec.clusters as name → replicas.
func bindingClusters(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	raw := jsonpath(t, "", "{.spec.clusters}", "-n", ns, "resourcebinding", name)
	var clusters []struct {
		Name     string `json:"name"`
		Replicas int    `json:"replicas"`
	}
	_ = json.Unmarshal([]byte(raw), &clusters)
	out := map[string]int{}
	for _, c := range clusters {
		out[c.Name] = c.Replicas
	}
	return out
}

// TestCustomizedKindIsDividedAggregatedAndFailedOver: a Rollout (a CRD
// atoll does not know) described by a customization in Karmada's format is
// divided over two members with per-cluster replicas written by its
// ReviseReplica script; the members' statuses come back through
// ReflectStatus and AggregateStatus onto the template; its dependency (a
// ConfigMap named in the pod template, found by GetDependencies) follows it;
// and InterpretHealth drives application failover off the member whose
// copy is unhealthy.
func TestCustomizedKindIsDividedAggregatedAndFailedOver(t *testing.T) {
	installCRDs(t)
	applyFile(t, "rollout-customization.yaml")
	const ns = "interp-rollout"
	world.MustKubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s}
data: {greeting: hello}
---
apiVersion: apps.example.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 5
  template:
    spec:
      containers:
        - name: web
          image: nginx
          envFrom: [{configMapRef: {name: web-config}}]
          resources: {requests: {cpu: 100m}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps.example.io/v1alpha1, kind: Rollout, name: web}]
%[2]s
  failover:
    application:
      decisionConditions: {tolerationSeconds: 3600}
      purgeMode: Directly
`, ns, dividedOverTwo(2, 3)), "apply", "-f", "-")

	framework.Eventually(t, 2*time.Minute, "the Rollout divided 2:3 by its ReviseReplica script", func() (bool, string) {
		clusters := bindingClusters(t, ns, "web-rollout")
		m1 := atoi(jsonpath(t, "member1", "{.spec.replicas}", "-n", ns, "rollout", "web"))
		m2 := atoi(jsonpath(t, "member2", "{.spec.replicas}", "-n", ns, "rollout", "web"))
		return clusters["member1"] == 2 && clusters["member2"] == 3 && m1 == 2 && m2 == 3,
			fmt.Sprintf("binding %v, member1 %d, member2 %d", clusters, m1, m2)
	})
	if req := jsonpath(t, "", "{.spec.replicaRequirements.resourceRequest.cpu}", "-n", ns, "resourcebinding", "web-rollout"); req != "100m" {
		t.Errorf("replicaRequirements.resourceRequest.cpu = %q, want 100m (kube.accuratePodRequirements)", req)
	}
	framework.Eventually(t, time.Minute, "the ConfigMap GetDependencies names follows the Rollout", func() (bool, string) {
		a := jsonpath(t, "member1", "{.data.greeting}", "-n", ns, "configmap", "web-config")
		b := jsonpath(t, "member2", "{.data.greeting}", "-n", ns, "configmap", "web-config")
		return a == "hello" && b == "hello", fmt.Sprintf("member1 %q, member2 %q", a, b)
	})

	// The members' rollout controller is played by the test: it reports
	// every replica ready.
	setReady := func(member string, replicas, ready int) {
		t.Helper()
		body := fmt.Sprintf(`{"status":{"replicas":%d,"readyReplicas":%d,"observedGeneration":1}}`, replicas, ready)
		if out, err := world.MemberKubectl(t, member, "", "patch", "-n", ns, "rollout", "web", "--subresource=status", "--type=merge", "-p", body); err != nil {
			t.Fatalf("patching the status in %s: %v\n%s", member, err, out)
		}
	}
	setReady("member1", 2, 2)
	setReady("member2", 3, 3)
	framework.Eventually(t, time.Minute, "the template's status aggregated by AggregateStatus", func() (bool, string) {
		r := jsonpath(t, "", "{.status.replicas}/{.status.readyReplicas}", "-n", ns, "rollout", "web")
		health := jsonpath(t, "", "{.status.aggregatedStatus[*].health}", "-n", ns, "resourcebinding", "web-rollout")
		return r == "5/5" && health == "Healthy Healthy", fmt.Sprintf("template status %s, health %q", r, health)
	})

	// The copies are unhealthy from their creation until the test reports
	// them ready, so the policy tolerates that for an hour; only now, with
	// both ready, does it tolerate 5 s (else a slow machine would see the
	// new copies evicted before the test had made them ready).
	world.MustKubectl(t, "", "patch", "-n", ns, "propagationpolicy", "web", "--type=merge",
		"-p", `{"spec":{"failover":{"application":{"decisionConditions":{"tolerationSeconds":5}}}}}`)
	framework.Eventually(t, time.Minute, "the binding tolerates 5 s", func() (bool, string) {
		got := jsonpath(t, "", "{.spec.failover.application.decisionConditions.tolerationSeconds}", "-n", ns, "resourcebinding", "web-rollout")
		return got == "5", got
	})

	// member2's copy stops being ready: InterpretHealth says Unhealthy, and
	// after tolerationSeconds application failover moves its share away.
	setReady("member2", 3, 0)
	framework.Eventually(t, 2*time.Minute, "member2 evicted by application failover, member1 holds all 5", func() (bool, string) {
		clusters := bindingClusters(t, ns, "web-rollout")
		m1 := atoi(jsonpath(t, "member1", "{.spec.replicas}", "-n", ns, "rollout", "web"))
		return len(clusters) == 1 && clusters["member1"] == 5 && m1 == 5, fmt.Sprintf("binding %v, member1 %d", clusters, m1)
	})
	framework.Eventually(t, time.Minute, "member2's copy withdrawn (purgeMode Directly)", func() (bool, string) {
		out, err := world.MemberKubectl(t, "member2", "", "get", "-n", ns, "rollout", "web")
		return err != nil && strings.Contains(out, "NotFound"), out
	})

	// member1's copy now wants 5 replicas and 2 are ready: it is unhealthy
	// for longer than tolerationSeconds as well. member2's task stays until
	// the replacement is healthy (as Karmada keeps every task, Directly ones
	// included), so member2 is not a candidate, and member1's eviction is
	// held back instead of sending the workload back to member2, and then
	// back again, every tolerationSeconds.
	setReady("member1", 5, 2)
	framework.Eventually(t, time.Minute, "member1's eviction held back while member2's task waits for a healthy replacement", func() (bool, string) {
		reason := jsonpath(t, "", `{.status.conditions[?(@.type=="EvictionBlocked")].reason}`, "-n", ns, "resourcebinding", "web-rollout")
		tasks := jsonpath(t, "", "{.spec.gracefulEvictionTasks[*].fromCluster}", "-n", ns, "resourcebinding", "web-rollout")
		clusters := bindingClusters(t, ns, "web-rollout")
		return reason == "NoAlternativeCluster" && tasks == "member2" && len(clusters) == 1 && clusters["member1"] == 5,
			fmt.Sprintf("EvictionBlocked %q, tasks from %q, binding %v", reason, tasks, clusters)
	})
	setReady("member1", 5, 5)
	framework.Eventually(t, time.Minute, "member2's task completed once member1 runs healthy, nothing blocked", func() (bool, string) {
		blocked := jsonpath(t, "", `{.status.conditions[?(@.type=="EvictionBlocked")].status}`, "-n", ns, "resourcebinding", "web-rollout")
		tasks := jsonpath(t, "", "{.spec.gracefulEvictionTasks[*].fromCluster}", "-n", ns, "resourcebinding", "web-rollout")
		return blocked != "True" && tasks == "", fmt.Sprintf("EvictionBlocked %q, tasks from %q", blocked, tasks)
	})
	if clusters := bindingClusters(t, ns, "web-rollout"); len(clusters) != 1 || clusters["member1"] != 5 {
		t.Errorf("binding %v after the task completed, want member1: 5", clusters)
	}
}

// TestFailingCustomizationIsReportedAndContained: a customization whose
// script does not compile, and then one that never returns, mark the
// bindings of their kind with an Interpreted condition naming the
// customization and the operation; other bindings keep propagating, and
// removing the customization clears the condition.
func TestFailingCustomizationIsReportedAndContained(t *testing.T) {
	installCRDs(t)
	const ns = "interp-broken"
	world.MustKubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps.example.io/v1alpha1
kind: Canary
metadata: {name: c1, namespace: %[1]s}
spec: {replicas: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: %[1]s}
spec:
  resourceSelectors:
    - {apiVersion: apps.example.io/v1alpha1, kind: Canary}
    - {apiVersion: v1, kind: ConfigMap}
  placement:
    clusterAffinity: {clusterNames: [member1]}
`, ns), "apply", "-f", "-")
	framework.Eventually(t, time.Minute, "the Canary propagated natively", func() (bool, string) {
		out := jsonpath(t, "member1", "{.metadata.name}", "-n", ns, "canary", "c1")
		return out == "c1", out
	})
	condition := func() string {
		return jsonpath(t, "", `{.status.conditions[?(@.type=="Interpreted")].reason}: {.status.conditions[?(@.type=="Interpreted")].message}`,
			"-n", ns, "resourcebinding", "c1-canary")
	}
	stillPropagates := func(name string) {
		t.Helper()
		world.MustKubectl(t, "", "create", "configmap", "-n", ns, name, "--from-literal=k=v")
		framework.Eventually(t, time.Minute, "another binding still propagates", func() (bool, string) {
			out := jsonpath(t, "member1", "{.data.k}", "-n", ns, "configmap", name)
			return out == "v", out
		})
	}

	applyFile(t, "canary-broken-customization.yaml")
	framework.Eventually(t, time.Minute, "the binding names the script that does not compile", func() (bool, string) {
		c := condition()
		return strings.HasPrefix(c, "StatusReflectionFailed: ResourceInterpreterCustomization example-canary: statusReflection: parsing"), c
	})
	stillPropagates("after-broken")

	applyFile(t, "canary-endless-customization.yaml")
	framework.Eventually(t, time.Minute, "the endless script is stopped by its time bound", func() (bool, string) {
		c := condition()
		return strings.Contains(c, "example-canary: statusReflection: exceeded its time bound"), c
	})
	stillPropagates("after-endless")

	world.MustKubectl(t, "", "delete", "resourceinterpretercustomization", "example-canary")
	framework.Eventually(t, time.Minute, "the condition goes with the customization", func() (bool, string) {
		c := condition()
		return c == ":", c
	})
}

// TestDividedJobParallelism: a Divided Job gets per-cluster parallelism that
// sums to the template's, and its completions are shared in proportion.
func TestDividedJobParallelism(t *testing.T) {
	const ns = "interp-job"
	world.MustKubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: batch/v1
kind: Job
metadata: {name: crunch, namespace: %[1]s}
spec:
  suspend: true
  parallelism: 6
  completions: 6
  template:
    spec:
      restartPolicy: Never
      containers: [{name: crunch, image: busybox}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: crunch, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: crunch}]
%[2]s
`, ns, dividedOverTwo(1, 2)), "apply", "-f", "-")
	framework.Eventually(t, 2*time.Minute, "per-cluster parallelism 2 + 4 = 6, completions 2 + 4", func() (bool, string) {
		p1 := jsonpath(t, "member1", "{.spec.parallelism}/{.spec.completions}", "-n", ns, "job", "crunch")
		p2 := jsonpath(t, "member2", "{.spec.parallelism}/{.spec.completions}", "-n", ns, "job", "crunch")
		clusters := bindingClusters(t, ns, "crunch-job")
		return p1 == "2/2" && p2 == "4/4" && clusters["member1"] == 2 && clusters["member2"] == 4,
			fmt.Sprintf("member1 %s, member2 %s, binding %v", p1, p2, clusters)
	})
}

// dividedOverTwo is a policy's placement dividing replicas over member1 and
// member2 by static weights w1:w2.
func dividedOverTwo(w1, w2 int) string {
	return fmt.Sprintf(`  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: %d}
          - {targetCluster: {clusterNames: [member2]}, weight: %d}`, w1, w2)
}
