package safety

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/test/framework"
)

// apply is `kubectl apply -f -` of manifest on the control plane.
func apply(t *testing.T, manifest string) {
	t.Helper()
	world.MustKubectl(t, manifest, "apply", "-f", "-")
}

// memberConfigMap returns the ConfigMap in a member, nil when absent.
func memberConfigMap(ctx context.Context, t *testing.T, cluster, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := world.MemberClientset(t, cluster).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading ConfigMap %s/%s in %s: %v", ns, name, cluster, err)
	}
	return cm
}

func waitConfigMap(ctx context.Context, t *testing.T, cluster, ns, name, key, value string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	framework.Eventually(t, 90*time.Second, fmt.Sprintf("ConfigMap %s/%s in %s with %s=%s", ns, name, cluster, key, value), func() (bool, string) {
		cm = memberConfigMap(ctx, t, cluster, ns, name)
		if cm == nil {
			return false, "absent"
		}
		return cm.Data[key] == value, fmt.Sprintf("data %v", cm.Data)
	})
	return cm
}

func waitGone(ctx context.Context, t *testing.T, cluster, ns, name string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, fmt.Sprintf("ConfigMap %s/%s gone from %s", ns, name, cluster), func() (bool, string) {
		cm := memberConfigMap(ctx, t, cluster, ns, name)
		return cm == nil, "still there"
	})
}

// sameObject holds while the member ConfigMap exists with the given uid
// and data value.
func sameObject(ctx context.Context, t *testing.T, cluster, ns, name string, uid types.UID, key, value string) func() (bool, string) {
	return func() (bool, string) {
		cm := memberConfigMap(ctx, t, cluster, ns, name)
		if cm == nil {
			return false, fmt.Sprintf("ConfigMap %s/%s was deleted from %s", ns, name, cluster)
		}
		if cm.UID != uid {
			return false, fmt.Sprintf("ConfigMap %s/%s in %s was re-created (uid %s, was %s)", ns, name, cluster, cm.UID, uid)
		}
		if cm.Data[key] != value {
			return false, fmt.Sprintf("ConfigMap %s/%s in %s was overwritten: data %v", ns, name, cluster, cm.Data)
		}
		return true, ""
	}
}

func namespaceYAML(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
}

func configMapYAML(ns, name, labels, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  labels: {%s}
data:
  value: %q
`, name, ns, labels, value)
}

// ppYAML is a PropagationPolicy of ns selecting ConfigMaps by selector
// (a YAML flow mapping such as "name: cfg"), placed on clusters.
func ppYAML(ns, name, annotations, selector, extra string, clusters ...string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: %s
  namespace: %s
  annotations: {%s}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, %s}
  placement:
    clusterAffinity:
      clusterNames: [%s]
%s`, name, ns, annotations, selector, strings.Join(clusters, ", "), extra)
}

// TestReleaseKeepsMemberObjects: deleting a template's only policy, or
// relabelling a template so its policy's selector no longer matches,
// releases it: the member objects stay exactly as they were, the binding
// says Released and nothing is synced any more (a template change is not
// propagated); a policy claiming it again resumes propagation; deleting
// the template then withdraws it.
func TestReleaseKeepsMemberObjects(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	ns := "release"
	apply(t, namespaceYAML(ns)+"---\n"+
		configMapYAML(ns, "by-name", "", "v1")+"---\n"+
		configMapYAML(ns, "by-label", "team: a", "v1")+"---\n"+
		ppYAML(ns, "by-name", "", "name: by-name", "", "member1")+"---\n"+
		ppYAML(ns, "by-label", "", "labelSelector: {matchLabels: {team: a}}", "", "member1"))
	byName := waitConfigMap(ctx, t, "member1", ns, "by-name", "value", "v1")
	byLabel := waitConfigMap(ctx, t, "member1", ns, "by-label", "value", "v1")

	world.MustKubectl(t, "", "delete", "propagationpolicy", "-n", ns, "by-name")
	world.MustKubectl(t, "", "label", "configmap", "-n", ns, "by-label", "team=b", "--overwrite")
	for _, name := range []string{"by-name-configmap", "by-label-configmap"} {
		framework.Eventually(t, 30*time.Second, "binding "+name+" released", func() (bool, string) {
			rb, err := framework.GetBinding(ctx, world.Client(t), ns, name)
			if err != nil {
				return false, err.Error()
			}
			_, released := rb.Annotations[workv1alpha2.ReleasedAnnotation]
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Released)
			return released && cond != nil && cond.Status == metav1.ConditionTrue,
				fmt.Sprintf("annotations %v, Released condition %v", rb.Annotations, cond)
		})
	}
	// A released template is not synced: a change stays in the control plane.
	apply(t, configMapYAML(ns, "by-name", "", "v2"))
	framework.Consistently(t, 20*time.Second, "released objects kept as they were", func() (bool, string) {
		if ok, msg := sameObject(ctx, t, "member1", ns, "by-name", byName.UID, "value", "v1")(); !ok {
			return ok, msg
		}
		return sameObject(ctx, t, "member1", ns, "by-label", byLabel.UID, "value", "v1")()
	})

	// Claimed again: the same member object follows the template again.
	apply(t, ppYAML(ns, "by-name", "", "name: by-name", "", "member1"))
	cm := waitConfigMap(ctx, t, "member1", ns, "by-name", "value", "v2")
	if cm.UID != byName.UID {
		t.Errorf("re-claimed ConfigMap was re-created in member1 (uid %s, was %s)", cm.UID, byName.UID)
	}
	framework.Eventually(t, 30*time.Second, "binding by-name-configmap no longer released", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, world.Client(t), ns, "by-name-configmap")
		if err != nil {
			return false, err.Error()
		}
		_, released := rb.Annotations[workv1alpha2.ReleasedAnnotation]
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Released)
		return !released && cond == nil, fmt.Sprintf("annotations %v, Released condition %v", rb.Annotations, cond)
	})

	// Deleting a template withdraws it, released or not.
	world.MustKubectl(t, "", "delete", "configmap", "-n", ns, "by-name", "by-label")
	waitGone(ctx, t, "member1", ns, "by-name")
	waitGone(ctx, t, "member1", ns, "by-label")
}

// TestWithdrawOnReleaseOptIn: a policy annotated
// atoll.dev/withdraw-on-release=true withdraws its templates when it is
// deleted.
func TestWithdrawOnReleaseOptIn(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	ns := "release-optin"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", `atoll.dev/withdraw-on-release: "true"`, "name: cfg", "", "member1"))
	waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	world.MustKubectl(t, "", "delete", "propagationpolicy", "-n", ns, "cfg")
	waitGone(ctx, t, "member1", ns, "cfg")
	framework.Eventually(t, 30*time.Second, "binding deleted", func() (bool, string) {
		_, err := framework.GetBinding(ctx, world.Client(t), ns, "cfg-configmap")
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// TestForeignObjectsAreLeftAlone: member objects that atoll did not create
// are neither overwritten (conflictResolution Abort) nor deleted, even when
// someone labelled them karmada.io/managed=true or copied a binding's
// annotations onto them with a permanent id that is not the binding's.
func TestForeignObjectsAreLeftAlone(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	ns := "foreign"
	memberYAML := namespaceYAML(ns) + "---\n" +
		configMapYAML(ns, "labelled", workv1alpha2.ManagedLabel+`: "true"`, "theirs") + "---\n" +
		fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: spoofed
  namespace: %s
  labels: {%s: "true", %s: 00000000-0000-0000-0000-000000000000}
  annotations: {%s: %s, %s: spoofed-configmap}
data:
  value: theirs
`, ns, workv1alpha2.ManagedLabel, workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ResourceBindingNamespaceAnnotation, ns, workv1alpha2.ResourceBindingNameAnnotation)
	if out, err := world.MemberKubectl(t, "member1", memberYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("creating member1's own ConfigMaps: %v\n%s", err, out)
	}
	theirs := map[string]types.UID{}
	for _, name := range []string{"labelled", "spoofed"} {
		theirs[name] = waitConfigMap(ctx, t, "member1", ns, name, "value", "theirs").UID
	}

	apply(t, namespaceYAML(ns)+"---\n"+
		configMapYAML(ns, "labelled", "", "ours")+"---\n"+
		configMapYAML(ns, "spoofed", "", "ours")+"---\n"+
		ppYAML(ns, "cfg", "", "labelSelector: {}", "", "member1", "member2"))
	waitConfigMap(ctx, t, "member2", ns, "labelled", "value", "ours")
	waitConfigMap(ctx, t, "member2", ns, "spoofed", "value", "ours")
	for _, name := range []string{"labelled", "spoofed"} {
		framework.Eventually(t, 30*time.Second, name+": the conflict in member1 reported", func() (bool, string) {
			rb, err := framework.GetBinding(ctx, world.Client(t), ns, name+"-configmap")
			if err != nil {
				return false, err.Error()
			}
			if item := framework.AggregatedStatusOf(rb, "member1"); item != nil {
				return !item.Applied && strings.Contains(item.AppliedMessage, "not managed by atoll"), item.AppliedMessage
			}
			return false, fmt.Sprintf("status %v", rb.Status.AggregatedStatus)
		})
	}
	holds := func() (bool, string) {
		for name, uid := range theirs {
			if ok, msg := sameObject(ctx, t, "member1", ns, name, uid, "value", "theirs")(); !ok {
				return ok, msg
			}
		}
		return true, ""
	}
	framework.Consistently(t, 10*time.Second, "member1's own ConfigMaps untouched", holds)

	// Deleting the templates withdraws atoll's copies, and only those.
	world.MustKubectl(t, "", "delete", "configmap", "-n", ns, "labelled", "spoofed")
	waitGone(ctx, t, "member2", ns, "labelled")
	waitGone(ctx, t, "member2", ns, "spoofed")
	framework.Consistently(t, 10*time.Second, "member1's own ConfigMaps still there after the templates went", holds)
}

// TestTakenOverObjectIsHandedBack: an object atoll took over with
// conflictResolution Overwrite is handed back (atoll's marks removed, the
// object kept) when the placement leaves its cluster, while the copy atoll
// created elsewhere is withdrawn normally when the template goes.
func TestTakenOverObjectIsHandedBack(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	ns := "takeover"
	if out, err := world.MemberKubectl(t, "member1", namespaceYAML(ns)+"---\n"+configMapYAML(ns, "legacy", "", "old"), "apply", "-f", "-"); err != nil {
		t.Fatalf("creating member1's own ConfigMap: %v\n%s", err, out)
	}
	before := waitConfigMap(ctx, t, "member1", ns, "legacy", "value", "old")
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "legacy", "", "new")+"---\n"+
		ppYAML(ns, "legacy", "", "name: legacy", "  conflictResolution: Overwrite\n", "member1", "member2"))
	took := waitConfigMap(ctx, t, "member1", ns, "legacy", "value", "new")
	if took.UID != before.UID {
		t.Fatalf("taking over re-created the object (uid %s, was %s)", took.UID, before.UID)
	}
	waitConfigMap(ctx, t, "member2", ns, "legacy", "value", "new")

	apply(t, ppYAML(ns, "legacy", "", "name: legacy", "  conflictResolution: Overwrite\n", "member2"))
	framework.Eventually(t, 60*time.Second, "member1's ConfigMap handed back", func() (bool, string) {
		cm := memberConfigMap(ctx, t, "member1", ns, "legacy")
		if cm == nil {
			return false, "deleted"
		}
		_, managed := cm.Labels[workv1alpha2.ManagedLabel]
		_, owner := cm.Annotations[workv1alpha2.ResourceBindingNameAnnotation]
		return !managed && !owner, fmt.Sprintf("labels %v annotations %v", cm.Labels, cm.Annotations)
	})
	framework.Consistently(t, 10*time.Second, "handed-back ConfigMap kept", sameObject(ctx, t, "member1", ns, "legacy", before.UID, "value", "new"))

	world.MustKubectl(t, "", "delete", "configmap", "-n", ns, "legacy")
	waitGone(ctx, t, "member2", ns, "legacy")
	framework.Consistently(t, 5*time.Second, "handed-back ConfigMap kept after the template went", sameObject(ctx, t, "member1", ns, "legacy", before.UID, "value", "new"))
}

// TestOverridesCannotChangeIdentity: an OverridePolicy that would change
// apiVersion, kind, name, namespace, generateName, owner references or
// managed fields is refused when it is created, with a message naming the
// field.
func TestOverridesCannotChangeIdentity(t *testing.T) {
	ns := "identity"
	apply(t, namespaceYAML(ns))
	for _, path := range []string{"/metadata/namespace", "/metadata/name", "/kind", "/apiVersion", "/metadata",
		"/metadata/generateName", "/metadata/ownerReferences", "/metadata/ownerReferences/0", "/metadata/managedFields"} {
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			op := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: move, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  overrideRules:
  - overriders:
      plaintext: [{path: %q, operator: replace, value: "kube-system"}]
`, ns, path)
			out, err := world.Kubectl(t, op, "apply", "-f", "-")
			if err == nil {
				t.Fatalf("OverridePolicy with plaintext path %s was accepted:\n%s", path, out)
			}
			if !strings.Contains(out, "plaintext[0].path") || !strings.Contains(out, "identity") {
				t.Errorf("refusal does not name the field and the reason:\n%s", out)
			}
		})
	}
	fieldOverrider := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: rename, namespace: %s}
spec:
  overrideRules:
  - overriders:
      fieldOverrider: [{fieldPath: /metadata/name, yaml: [{subPath: /x, operator: add, value: "y"}]}]
`, ns)
	if out, err := world.Kubectl(t, fieldOverrider, "apply", "-f", "-"); err == nil || !strings.Contains(out, "fieldOverrider[0].fieldPath") || !strings.Contains(out, "identity") {
		t.Errorf("fieldOverrider on /metadata/name: err=%v\n%s", err, out)
	}
	if out := world.MustKubectl(t, "", "get", "overridepolicies", "-n", ns, "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("refused OverridePolicies exist: %s", out)
	}
}

// memberPVC returns the PersistentVolumeClaim in a member, nil when absent.
func memberPVC(ctx context.Context, t *testing.T, cluster, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := world.MemberClientset(t, cluster).CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading PVC %s/%s in %s: %v", ns, name, cluster, err)
	}
	return pvc
}

// dependentDeploymentYAML is a one-replica Deployment app whose container
// has the extra field container (what refers to its dependencies) and whose
// pod spec has podSpec (may be empty).
func dependentDeploymentYAML(ns, app, container, podSpec string) string {
	if podSpec != "" {
		podSpec = "\n      " + podSpec
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers: [{name: %[2]s, image: registry.example/%[2]s:1, %[3]s}]%[4]s
`, ns, app, container, podSpec)
}

// propagateDepsPolicyYAML places Deployment app, with its dependencies, on
// cluster.
func propagateDepsPolicyYAML(ns, app, cluster string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [%[3]s]}}
`, ns, app, cluster)
}

// TestVolumeOutlivesItsWorkload: a PVC propagated as a dependency of a
// Deployment stays in the member, with its uid, when the Deployment is
// deleted, re-applied or moved to another cluster; the PVC's binding says
// why it kept the copy. Only deleting the PVC template removes it.
func TestVolumeOutlivesItsWorkload(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	ns := "volumes"
	deployment := dependentDeploymentYAML(ns, "db", "volumeMounts: [{name: data, mountPath: /data}]",
		"volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]")
	policy := func(cluster string) string { return propagateDepsPolicyYAML(ns, "db", cluster) }
	apply(t, namespaceYAML(ns)+"---\n"+fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %s}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, ns)+"---\n"+deployment+"---\n"+policy("member1"))

	var uid types.UID
	framework.Eventually(t, 90*time.Second, "Deployment db and PVC data in member1", func() (bool, string) {
		pvc := memberPVC(ctx, t, "member1", ns, "data")
		_, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
		if pvc != nil {
			uid = pvc.UID
		}
		return pvc != nil && err == nil, fmt.Sprintf("pvc %v, deployment: %v", pvc != nil, err)
	})
	pvcKept := func(cluster string) func() (bool, string) {
		return func() (bool, string) {
			pvc := memberPVC(ctx, t, cluster, ns, "data")
			if pvc == nil || pvc.DeletionTimestamp != nil {
				return false, fmt.Sprintf("PVC data deleted from %s", cluster)
			}
			return pvc.UID == uid, fmt.Sprintf("PVC data in %s re-created (uid %s, was %s)", cluster, pvc.UID, uid)
		}
	}
	deploymentGone := func(cluster string) {
		t.Helper()
		framework.Eventually(t, 60*time.Second, "Deployment db gone from "+cluster, func() (bool, string) {
			_, err := world.MemberClientset(t, cluster).AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
		})
	}

	// Deleted: the workload goes, its volume stays, and its binding says why.
	world.MustKubectl(t, "", "delete", "deployment", "-n", ns, "db")
	deploymentGone("member1")
	framework.Eventually(t, 30*time.Second, "PVC binding saying it kept member1's copy", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, world.Client(t), ns, "data-persistentvolumeclaim")
		if err != nil {
			return false, err.Error()
		}
		if item := framework.AggregatedStatusOf(rb, "member1"); item != nil {
			return strings.Contains(item.AppliedMessage, "holds data"), item.AppliedMessage
		}
		return false, fmt.Sprintf("status %v", rb.Status.AggregatedStatus)
	})
	framework.Consistently(t, 10*time.Second, "PVC kept in member1 after the Deployment went", pvcKept("member1"))

	// Re-applied: the same volume, not a new one.
	apply(t, deployment)
	framework.Eventually(t, 60*time.Second, "Deployment db back in member1", func() (bool, string) {
		_, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("get: %v", err)
	})
	framework.Consistently(t, 5*time.Second, "PVC kept in member1 after the Deployment came back", pvcKept("member1"))

	// Moved: member2 gets its own copy, member1 keeps its data.
	apply(t, policy("member2"))
	deploymentGone("member1")
	framework.Eventually(t, 60*time.Second, "PVC data in member2", func() (bool, string) {
		return memberPVC(ctx, t, "member2", ns, "data") != nil, "absent"
	})
	framework.Consistently(t, 10*time.Second, "PVC kept in member1 after the Deployment moved", pvcKept("member1"))

	// Deleting the PVC template is what removes the volumes.
	world.MustKubectl(t, "", "delete", "deployment", "-n", ns, "db")
	world.MustKubectl(t, "", "delete", "pvc", "-n", ns, "data", "--wait=false")
	for _, cluster := range []string{"member1", "member2"} {
		framework.Eventually(t, 60*time.Second, "PVC data deleted from "+cluster, func() (bool, string) {
			pvc := memberPVC(ctx, t, cluster, ns, "data")
			return pvc == nil || pvc.DeletionTimestamp != nil, "still there"
		})
	}
}

// tolerateFailures tolerates the not-ready and unreachable NoExecute
// taints forever, so failover leaves a partitioned member's copy alone and
// only the placement decides.
const tolerateFailures = `    clusterTolerations:
    - {key: cluster.karmada.io/not-ready, operator: Exists, effect: NoExecute}
    - {key: cluster.karmada.io/unreachable, operator: Exists, effect: NoExecute}
`

// TestSuspendedDispatchingStopsWithdrawal: while a policy suspends
// dispatching, a placement change removes nothing; resumed, the copy that
// left the placement is withdrawn.
func TestSuspendedDispatchingStopsWithdrawal(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	ns := "suspended"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", "", "name: cfg", "", "member1", "member2"))
	waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	copy2 := waitConfigMap(ctx, t, "member2", ns, "cfg", "value", "v1")

	apply(t, ppYAML(ns, "cfg", "", "name: cfg", "  suspension: {dispatching: true}\n", "member1"))
	framework.Eventually(t, 30*time.Second, "binding placed on member1 only", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, world.Client(t), ns, "cfg-configmap")
		if err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.Clusters) == 1 && rb.Spec.Clusters[0].Name == "member1", fmt.Sprintf("clusters %v", rb.Spec.Clusters)
	})
	framework.Consistently(t, 10*time.Second, "member2's copy kept while dispatching is suspended",
		sameObject(ctx, t, "member2", ns, "cfg", copy2.UID, "value", "v1"))

	apply(t, ppYAML(ns, "cfg", "", "name: cfg", "", "member1"))
	waitGone(ctx, t, "member2", ns, "cfg")
}

// TestWithdrawalWaitsForPartitionedMember: a member partitioned away while
// the control plane restarts and the placement leaves it keeps its copy
// until it can be reached again; then the copy is withdrawn (it was
// recorded before the restart, so no orphan is left), and the copy in the
// member still placed is untouched.
func TestWithdrawalWaitsForPartitionedMember(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	ns := "partitioned"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", "", "name: cfg", tolerateFailures, "member1", "member2"))
	copy1 := waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	copy2 := waitConfigMap(ctx, t, "member2", ns, "cfg", "value", "v1")
	framework.Eventually(t, 30*time.Second, "both clusters recorded in the binding status", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, world.Client(t), ns, "cfg-configmap")
		if err != nil {
			return false, err.Error()
		}
		return len(rb.Status.AggregatedStatus) == 2, fmt.Sprintf("status %v", rb.Status.AggregatedStatus)
	})

	heal := world.InjectFault(t, "member2", "partition", "heal")
	world.Fault(t, "control-plane", "stop")
	world.Fault(t, "control-plane", "start --wait 2m")

	apply(t, ppYAML(ns, "cfg", "", "name: cfg", tolerateFailures, "member1"))
	framework.Consistently(t, 15*time.Second, "member2's copy kept while it cannot be reached",
		sameObject(ctx, t, "member2", ns, "cfg", copy2.UID, "value", "v1"))
	heal()
	waitGone(ctx, t, "member2", ns, "cfg")
	framework.Consistently(t, 5*time.Second, "member1's copy untouched",
		sameObject(ctx, t, "member1", ns, "cfg", copy1.UID, "value", "v1"))
}

// badBindings are bindings that would make atoll copy what their author
// may not read into members: another namespace's template, the member
// credentials, and a ClusterResourceBinding pointing at a namespaced object.
func badBindings() string {
	return `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: steal, namespace: sneaky}
spec:
  resource: {apiVersion: v1, kind: Secret, namespace: karmada-cluster, name: member1}
  clusters: [{name: member2}]
---
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: member1-secret, namespace: karmada-cluster}
spec:
  resource: {apiVersion: v1, kind: Secret, namespace: karmada-cluster, name: member1}
  clusters: [{name: member2}]
---
apiVersion: work.karmada.io/v1alpha2
kind: ClusterResourceBinding
metadata: {name: steal-cluster}
spec:
  resource: {apiVersion: v1, kind: Secret, namespace: karmada-cluster, name: member1}
  clusters: [{name: member2}]
`
}

// TestBindingsStayInTheirRoom: a binding that points outside its own
// namespace, or lives in a reserved namespace, is refused at admission with
// a message naming the field; and with the admission policy removed (as if
// it had been off), such a binding is still never acted on.
func TestBindingsStayInTheirRoom(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	apply(t, namespaceYAML("sneaky"))
	out, err := world.Kubectl(t, badBindings(), "apply", "-f", "-")
	if err == nil {
		t.Fatalf("bindings out of their room were accepted:\n%s", out)
	}
	for _, want := range []string{
		`resourcebindings.work.karmada.io "steal"`, "spec.resource.namespace must be the ResourceBinding's own namespace",
		`resourcebindings.work.karmada.io "member1-secret"`, "reserved namespace karmada-cluster",
		`clusterresourcebindings.work.karmada.io "steal-cluster"`, "spec.resource.namespace must be empty",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("refusal does not say %q:\n%s", want, out)
		}
	}

	// Defence in depth: without the policy, the executor still refuses.
	world.MustKubectl(t, "", "delete", "validatingadmissionpolicybinding", "atoll-binding-scope")
	t.Cleanup(func() {
		crds := world.Atoll(t, "crds")
		if out, err := world.Kubectl(t, crds, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
			t.Errorf("re-installing the admission policy: %v\n%s", err, out)
		}
	})
	framework.Eventually(t, 30*time.Second, "bad bindings accepted without the policy", func() (bool, string) {
		out, err := world.Kubectl(t, badBindings(), "apply", "-f", "-")
		return err == nil, out
	})
	framework.Consistently(t, 15*time.Second, "no member credentials copied into member2", func() (bool, string) {
		for _, ns := range []string{"karmada-cluster", "sneaky"} {
			if _, err := world.MemberClientset(t, "member2").CoreV1().Secrets(ns).Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Secret %s/member1 in member2: %v", ns, err)
			}
		}
		return true, ""
	})
	rb, err := framework.GetBinding(ctx, world.Client(t), "sneaky", "steal")
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Finalizers) != 0 || len(rb.Status.AggregatedStatus) != 0 {
		t.Errorf("executor acted on an out-of-room binding: finalizers %v, status %v", rb.Finalizers, rb.Status.AggregatedStatus)
	}
	world.MustKubectl(t, badBindings(), "delete", "-f", "-", "--ignore-not-found", "--wait=false")
}

// TestDeadMemberHoldsNothingUp: with member2 stopped, a template placed on
// both members is deleted and created again at once (the dead member does
// not hold the old binding's deletion up), member1 gets the new version,
// and when member2 is back its old copy (recorded as a pending withdrawal)
// is removed and the new one applied.
func TestDeadMemberHoldsNothingUp(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	ns := "dead-member"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", "", "name: cfg", tolerateFailures, "member1", "member2"))
	waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	old := waitConfigMap(ctx, t, "member2", ns, "cfg", "value", "v1")

	start := world.InjectFault(t, "member2", "stop", "start --wait 2m")
	framework.Eventually(t, 60*time.Second, "member2 not Ready", func() (bool, string) {
		cl, err := framework.GetCluster(ctx, world.Client(t), "member2")
		if err != nil {
			return false, err.Error()
		}
		s := framework.ClusterReadyStatus(cl)
		return s != "" && s != metav1.ConditionTrue, fmt.Sprintf("Ready=%q", s)
	})

	world.MustKubectl(t, "", "delete", "configmap", "-n", ns, "cfg")
	framework.Eventually(t, 20*time.Second, "the old binding gone although member2 is down", func() (bool, string) {
		_, err := framework.GetBinding(ctx, world.Client(t), ns, "cfg-configmap")
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	waitGone(ctx, t, "member1", ns, "cfg")
	apply(t, configMapYAML(ns, "cfg", "", "v2"))
	waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v2")

	start()
	framework.Eventually(t, 90*time.Second, "member2's old copy replaced by the new version", func() (bool, string) {
		cm := memberConfigMap(ctx, t, "member2", ns, "cfg")
		if cm == nil {
			return false, "absent"
		}
		return cm.UID != old.UID && cm.Data["value"] == "v2", fmt.Sprintf("uid %s (old %s) data %v", cm.UID, old.UID, cm.Data)
	})
}

// TestDeletedMemberNamespaceIsRecreated: a namespace deleted in a member
// (by someone, with atoll's objects in it) is created again with them.
func TestDeletedMemberNamespaceIsRecreated(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	ns := "recreated"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", "", "name: cfg", "", "member1"))
	first := waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	if out, err := world.MemberKubectl(t, "member1", "", "delete", "namespace", ns, "--wait=true", "--timeout=60s"); err != nil {
		t.Fatalf("deleting namespace %s in member1: %v\n%s", ns, err, out)
	}
	framework.Eventually(t, 90*time.Second, "namespace and ConfigMap back in member1", func() (bool, string) {
		cm := memberConfigMap(ctx, t, "member1", ns, "cfg")
		if cm == nil {
			return false, "absent"
		}
		return cm.UID != first.UID && cm.Data["value"] == "v1", fmt.Sprintf("uid %s (first %s)", cm.UID, first.UID)
	})
}

// TestDependencyLeavesAfterItsWorkload: when a workload moves, the
// ConfigMap it mounts leaves the old cluster only after the workload is
// gone from it (never a moment where the old copy runs without its
// configuration).
func TestDependencyLeavesAfterItsWorkload(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	ns := "dep-order"
	deployment := dependentDeploymentYAML(ns, "web", "envFrom: [{configMapRef: {name: web-config}}]", "")
	policy := func(cluster string) string { return propagateDepsPolicyYAML(ns, "web", cluster) }
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "web-config", "", "v1")+"---\n"+deployment+"---\n"+policy("member1"))
	waitConfigMap(ctx, t, "member1", ns, "web-config", "value", "v1")
	m1 := world.MemberClientset(t, "member1")
	framework.Eventually(t, 60*time.Second, "Deployment web in member1", func() (bool, string) {
		_, err := m1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("get: %v", err)
	})

	apply(t, policy("member2"))
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, depErr := m1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		cm := memberConfigMap(ctx, t, "member1", ns, "web-config")
		if depErr == nil && (cm == nil || cm.DeletionTimestamp != nil) {
			t.Fatal("member1's ConfigMap web-config was withdrawn while the Deployment that mounts it was still there")
		}
		if apierrors.IsNotFound(depErr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment web still in member1 after the move: %v", depErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitGone(ctx, t, "member1", ns, "web-config")
	waitConfigMap(ctx, t, "member2", ns, "web-config", "value", "v1")
}

// TestUnrecordedCopyIsWithdrawn: a copy that carries a binding's ownership
// record in a cluster the binding's status never listed (what a crash
// between apply and status write leaves) is found from the member and
// withdrawn, since the placement does not want it there; the wanted copy
// stays.
func TestUnrecordedCopyIsWithdrawn(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	ns := "unrecorded"
	apply(t, namespaceYAML(ns)+"---\n"+configMapYAML(ns, "cfg", "", "v1")+"---\n"+
		ppYAML(ns, "cfg", "", "name: cfg", "", "member1"))
	wanted := waitConfigMap(ctx, t, "member1", ns, "cfg", "value", "v1")
	rb, err := framework.GetBinding(ctx, world.Client(t), ns, "cfg-configmap")
	if err != nil {
		t.Fatal(err)
	}
	id := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	orphan := namespaceYAML(ns) + "---\n" + fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: %s
  labels: {%s: "true", %s: %s}
  annotations: {%s: %s, %s: cfg-configmap}
data:
  value: v1
`, ns, workv1alpha2.ManagedLabel, workv1alpha2.ResourceBindingPermanentIDLabel, id, workv1alpha2.ResourceBindingNamespaceAnnotation, ns, workv1alpha2.ResourceBindingNameAnnotation)
	if out, err := world.MemberKubectl(t, "member2", orphan, "apply", "-f", "-"); err != nil {
		t.Fatalf("creating the unrecorded copy in member2: %v\n%s", err, out)
	}
	waitGone(ctx, t, "member2", ns, "cfg")
	framework.Consistently(t, 5*time.Second, "member1's copy untouched", sameObject(ctx, t, "member1", ns, "cfg", wanted.UID, "value", "v1"))
}
