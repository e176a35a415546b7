package propagation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/retry"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var members = []string{"member1", "member2"}

// memberDeployment returns the Deployment in a member, or nil.
func memberDeployment(ctx context.Context, t *testing.T, cluster, ns, name string) *appsv1.Deployment {
	d, err := world.MemberClientset(t, cluster).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return d
}

// TestClustersJoinedAndReady: atoll up joined its members; they are Ready
// with their region/zone/provider, versions and resources.
func TestClustersJoinedAndReady(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	for _, name := range members {
		framework.Eventually(t, time.Minute, name+" Ready with status", func() (bool, string) {
			cl, err := framework.GetCluster(ctx, c, name)
			if err != nil {
				return false, err.Error()
			}
			ready := meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			ok := ready && cl.Status.KubernetesVersion != "" && cl.Status.NodeSummary != nil && cl.Status.NodeSummary.ReadyNum == 3 &&
				cl.Spec.Region != "" && cl.Spec.Provider != ""
			return ok, fmt.Sprintf("ready=%v version=%q nodes=%v region=%q", ready, cl.Status.KubernetesVersion, cl.Status.NodeSummary, cl.Spec.Region)
		})
	}
	out := world.Atoll(t, "get", "clusters", "--kubeconfig", world.Kubeconfig)
	for _, name := range members {
		if !strings.Contains(out, name) {
			t.Errorf("atoll get clusters does not list %s:\n%s", name, out)
		}
	}
}

// TestDuplicatedPropagation: a Deployment, Service and ConfigMap reach both
// members; pods run; the template's status adds up; atoll get shows both.
func TestDuplicatedPropagation(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "dup"
	framework.CreateNamespace(t, c, ns)
	objs := []client.Object{
		utiltesting.MakeDeployment("nginx", ns).Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: ns}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "nginx"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}},
		utiltesting.MakeConfigMap("nginx", ns).Data("k", "v").Obj(),
		utiltesting.MakePropagationPolicy("nginx", ns).ClusterNames(members...).
			Select("apps/v1", "Deployment", "nginx").Select("v1", "Service", "nginx").Select("v1", "ConfigMap", "nginx").Obj(),
	}
	framework.Create(t, c, objs...)
	for _, m := range members {
		framework.Eventually(t, 90*time.Second, "Deployment, Service and ConfigMap in "+m+" with 2 ready pods", func() (bool, string) {
			cs := world.MemberClientset(t, m)
			d := memberDeployment(ctx, t, m, ns, "nginx")
			_, svcErr := cs.CoreV1().Services(ns).Get(ctx, "nginx", metav1.GetOptions{})
			_, cmErr := cs.CoreV1().ConfigMaps(ns).Get(ctx, "nginx", metav1.GetOptions{})
			ready := int32(0)
			if d != nil {
				ready = d.Status.ReadyReplicas
			}
			return d != nil && svcErr == nil && cmErr == nil && ready == 2, fmt.Sprintf("deployment=%v ready=%d service=%v configmap=%v", d != nil, ready, svcErr, cmErr)
		})
	}
	framework.Eventually(t, 60*time.Second, "template readyReplicas = 4", func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 4 && d.Status.ObservedGeneration == d.Generation,
			fmt.Sprintf("readyReplicas=%d observedGeneration=%d generation=%d", d.Status.ReadyReplicas, d.Status.ObservedGeneration, d.Generation)
	})
	rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "nginx"))
	if err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied) || len(rb.Status.AggregatedStatus) != 2 {
		t.Errorf("binding status: conditions %v, %d aggregated", rb.Status.Conditions, len(rb.Status.AggregatedStatus))
	}
	out := world.Atoll(t, "get", "deployments", "-n", ns, "--kubeconfig", world.Kubeconfig)
	for _, m := range members {
		if !strings.Contains(out, m) {
			t.Errorf("atoll get deployments does not show %s:\n%s", m, out)
		}
	}
}

// TestDividedPropagation: replicas divided by static weights 1:2 — 7 gives
// member1 2 and member2 5 in the binding and in the members; scaling to 8
// only adds (house monotonicity): 3/5.
func TestDividedPropagation(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "divided"
	framework.CreateNamespace(t, c, ns)
	placement := utiltesting.MakePlacement().ClusterNames(members...).ClusterWeight("member1", 1).ClusterWeight("member2", 2).Obj()
	tpl := utiltesting.MakeDeployment("nginx", ns).Replicas(7).Request(corev1.ResourceCPU, "100m").Obj()
	framework.Create(t, c, tpl, utiltesting.MakePropagationPolicy("nginx", ns).Placement(placement).Select("apps/v1", "Deployment", "nginx").Obj())
	expectSplit := func(want map[string]int32) {
		t.Helper()
		framework.Eventually(t, 90*time.Second, fmt.Sprintf("replicas split %v in binding and members", want), func() (bool, string) {
			rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "nginx"))
			if err != nil {
				return false, err.Error()
			}
			got := map[string]int32{}
			for _, tc := range rb.Spec.Clusters {
				got[tc.Name] = tc.Replicas
			}
			var inMembers []string
			ok := len(got) == len(want)
			for m, n := range want {
				if got[m] != n {
					ok = false
				}
				d := memberDeployment(ctx, t, m, ns, "nginx")
				if d == nil || d.Spec.Replicas == nil || *d.Spec.Replicas != n {
					ok = false
				}
				if d != nil && d.Spec.Replicas != nil {
					inMembers = append(inMembers, fmt.Sprintf("%s=%d", m, *d.Spec.Replicas))
				}
			}
			return ok, fmt.Sprintf("binding %v, members %s", got, strings.Join(inMembers, " "))
		})
	}
	expectSplit(map[string]int32{"member1": 2, "member2": 5})

	patch := client.MergeFrom(tpl.DeepCopy())
	tpl.Spec.Replicas = ptr.To[int32](8)
	if err := c.Patch(ctx, tpl, patch); err != nil {
		t.Fatal(err)
	}
	expectSplit(map[string]int32{"member1": 3, "member2": 5})
}

// TestUpdateDriftAndDeletion: a template update reaches the members; a
// member object deleted or edited by hand comes back; deleting the template
// withdraws it, unless the policy preserves resources on deletion.
func TestUpdateDriftAndDeletion(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	ns := "lifecycle"
	framework.CreateNamespace(t, c, ns)
	tpl := utiltesting.MakeDeployment("nginx", ns).Replicas(1).Request(corev1.ResourceCPU, "100m").Obj()
	framework.Create(t, c, tpl, utiltesting.MakePropagationPolicy("nginx", ns).ClusterNames(members...).Select("apps/v1", "Deployment", "nginx").Obj())
	imageIn := func(m string) string {
		if d := memberDeployment(ctx, t, m, ns, "nginx"); d != nil {
			return d.Spec.Template.Spec.Containers[0].Image
		}
		return ""
	}
	framework.Eventually(t, 90*time.Second, "nginx:1.27 in both members", func() (bool, string) {
		return imageIn("member1") == "nginx:1.27" && imageIn("member2") == "nginx:1.27", imageIn("member1") + " " + imageIn("member2")
	})

	patch := client.MergeFrom(tpl.DeepCopy())
	tpl.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	if err := c.Patch(ctx, tpl, patch); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, "nginx:1.28 in both members", func() (bool, string) {
		return imageIn("member1") == "nginx:1.28" && imageIn("member2") == "nginx:1.28", imageIn("member1") + " " + imageIn("member2")
	})

	// Drift: delete in member1, edit in member2.
	if err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Delete(ctx, "nginx", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The member's deployment controller writes the object too: the edit
	// is retried on a conflict, as any client's would be.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := memberDeployment(ctx, t, "member2", ns, "nginx")
		d.Spec.Template.Spec.Containers[0].Image = "nginx:evil"
		_, err := world.MemberClientset(t, "member2").AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "drift undone in both members", func() (bool, string) {
		return imageIn("member1") == "nginx:1.28" && imageIn("member2") == "nginx:1.28", imageIn("member1") + " " + imageIn("member2")
	})

	if err := c.Delete(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, "Deployment withdrawn from both members", func() (bool, string) {
		_, err1 := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		_, err2 := world.MemberClientset(t, "member2").AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), fmt.Sprintf("%v / %v", err1, err2)
	})
	// One event for the whole withdrawal, naming every cluster, not one
	// event write per cluster.
	want := "Deleted Deployment lifecycle/nginx from cluster(s) member1, member2"
	waitEvent(ctx, t, c, ns, "nginx-deployment", "Withdrawn", want)
	if msgs, err := framework.EventMessages(ctx, c, ns, "nginx-deployment", "Withdrawn"); err != nil || len(msgs) != 1 {
		t.Fatalf("Withdrawn events on the binding: %q (%v), want only %q", msgs, err, want)
	}
}

// TestPreserveResourcesOnDeletion keeps member objects when the template goes.
func TestPreserveResourcesOnDeletion(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "preserve"
	framework.CreateNamespace(t, c, ns)
	pp := utiltesting.MakePropagationPolicy("nginx", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "nginx").
		PreserveResourcesOnDeletion().Obj()
	tpl := utiltesting.MakeDeployment("nginx", ns).Replicas(1).Request(corev1.ResourceCPU, "100m").Obj()
	framework.Create(t, c, tpl, pp)
	framework.Eventually(t, 90*time.Second, "Deployment in member1", func() (bool, string) {
		return memberDeployment(ctx, t, "member1", ns, "nginx") != nil, ""
	})
	if err := c.Delete(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, "binding gone", func() (bool, string) {
		_, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "nginx"))
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if memberDeployment(ctx, t, "member1", ns, "nginx") == nil {
		t.Error("member Deployment deleted although the policy preserves resources on deletion")
	}
}

// TestPolicyPriority: between competing policies the explicit priority
// wins, then the implicit one (name match beats label match), as Karmada.
func TestPolicyPriority(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "priority"
	framework.CreateNamespace(t, c, ns)
	byLabel := utiltesting.MakePropagationPolicy("by-label", ns).ClusterNames("member1").
		SelectLabels("apps/v1", "Deployment", map[string]string{"app": "nginx"}).Obj()
	byName := utiltesting.MakePropagationPolicy("by-name", ns).ClusterNames("member2").Select("apps/v1", "Deployment", "nginx").Obj()
	framework.Create(t, c, byLabel, byName, utiltesting.MakeDeployment("nginx", ns).Replicas(1).Request(corev1.ResourceCPU, "100m").Obj())
	claimedBy := func() string {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err != nil {
			return err.Error()
		}
		return d.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]
	}
	framework.Eventually(t, 60*time.Second, "name match wins over label match", func() (bool, string) {
		return claimedBy() == "by-name" && memberDeployment(ctx, t, "member2", ns, "nginx") != nil, claimedBy()
	})
	// The member object says which policy claims it, as in Karmada (whose
	// priority tests read it there).
	if err := c.Get(ctx, client.ObjectKeyFromObject(byName), byName); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "the claim on member2's object", func() (bool, string) {
		d := memberDeployment(ctx, t, "member2", ns, "nginx")
		if d == nil {
			return false, "no Deployment in member2"
		}
		return d.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] == "by-name" &&
				d.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] == ns &&
				d.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == byName.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel],
			fmt.Sprintf("labels %v annotations %v", d.Labels, d.Annotations)
	})
}

// TestStoppedMemberIsTaintedAndRecovers: a stopped member turns not Ready
// and gets the unreachable (or not-ready) taint; started again it is Ready
// and untainted.
func TestStoppedMemberIsTaintedAndRecovers(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	start := world.InjectFault(t, "member2", "stop", "start")
	tainted := func(cl *clusterv1alpha1.Cluster) bool {
		for _, taint := range cl.Spec.Taints {
			if (taint.Key == clusterv1alpha1.TaintClusterUnreachable || taint.Key == clusterv1alpha1.TaintClusterNotReady) && taint.Effect == corev1.TaintEffectNoSchedule {
				return true
			}
		}
		return false
	}
	framework.Eventually(t, 60*time.Second, "member2 not Ready and tainted", func() (bool, string) {
		cl, err := framework.GetCluster(ctx, c, "member2")
		if err != nil {
			return false, err.Error()
		}
		return !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && tainted(cl),
			fmt.Sprintf("conditions=%v taints=%v", cl.Status.Conditions, cl.Spec.Taints)
	})
	start()
	framework.Eventually(t, 60*time.Second, "member2 Ready again and untainted", func() (bool, string) {
		cl, err := framework.GetCluster(ctx, c, "member2")
		if err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && !tainted(cl),
			fmt.Sprintf("conditions=%v taints=%v", cl.Status.Conditions, cl.Spec.Taints)
	})
}

// TestRestartWritesNothing restarts atoll (control plane, controllers and
// members) with nothing changed: no member object, binding or template is
// written again.
func TestRestartWritesNothing(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	ns := "restart"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c, utiltesting.MakeDeployment("nginx", ns).Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(),
		utiltesting.MakeConfigMap("settings", ns).Data("k", "v").Obj(),
		utiltesting.MakePropagationPolicy("all", ns).ClusterNames(members...).
			Select("apps/v1", "Deployment", "nginx").Select("v1", "ConfigMap", "settings").Obj())
	// Settled: pods ready everywhere and the template status aggregated.
	framework.Eventually(t, 90*time.Second, "propagated and settled", func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 4 && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("ready=%d", d.Status.ReadyReplicas)
	})
	time.Sleep(3 * time.Second) // let the last coalesced status writes land

	versions := func() map[string]string {
		v := map[string]string{}
		for _, m := range members {
			cs := world.MemberClientset(t, m)
			if d, err := cs.AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{}); err == nil {
				v[m+"/deployment"] = d.ResourceVersion
			}
			if cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err == nil {
				v[m+"/configmap"] = cm.ResourceVersion
			}
		}
		cp := world.Client(t)
		for _, kind := range []string{"Deployment", "ConfigMap"} {
			name := "nginx"
			if kind == "ConfigMap" {
				name = "settings"
			}
			if rb, err := framework.GetBinding(ctx, cp, ns, names.BindingName(kind, name)); err == nil {
				v["binding/"+kind] = rb.ResourceVersion
			}
		}
		var d appsv1.Deployment
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err == nil {
			v["template/deployment"] = d.ResourceVersion
		}
		return v
	}
	before := versions()
	if len(before) != 7 {
		t.Fatalf("expected 7 objects before restart, got %v", before)
	}
	if err := world.Stop(); err != nil {
		t.Fatal(err)
	}
	world.Start(t)
	// Controllers have resynced everything once the clusters are Ready again
	// and a few status periods have passed.
	framework.Eventually(t, time.Minute, "members Ready after restart", func() (bool, string) {
		var list clusterv1alpha1.ClusterList
		if err := world.Client(t).List(ctx, &list); err != nil {
			return false, err.Error()
		}
		for _, cl := range list.Items {
			if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return false, cl.Name + " not ready"
			}
		}
		return true, ""
	})
	time.Sleep(5 * time.Second)
	if diff := cmpVersions(before, versions()); diff != "" {
		t.Errorf("objects written after a restart with nothing changed:\n%s", diff)
	}
}

func cmpVersions(before, after map[string]string) string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, fmt.Sprintf("%s: resourceVersion %s -> %s", k, v, after[k]))
		}
	}
	return strings.Join(out, "\n")
}

// TestSuspendedDispatching: with suspension.dispatching a template change
// does not reach the members; lifting it delivers the change.
func TestSuspendedDispatching(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "suspend"
	framework.CreateNamespace(t, c, ns)
	tpl := utiltesting.MakeDeployment("nginx", ns).Replicas(1).Request(corev1.ResourceCPU, "100m").Obj()
	pp := utiltesting.MakePropagationPolicy("nginx", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "nginx").Obj()
	framework.Create(t, c, tpl, pp)
	imageIn := func() string {
		if d := memberDeployment(ctx, t, "member1", ns, "nginx"); d != nil {
			return d.Spec.Template.Spec.Containers[0].Image
		}
		return ""
	}
	framework.Eventually(t, 90*time.Second, "nginx:1.27 in member1", func() (bool, string) { return imageIn() == "nginx:1.27", imageIn() })

	setSuspended := func(v bool) {
		t.Helper()
		framework.Update(t, c, pp, func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(v)}
		})
	}
	setSuspended(true)
	framework.Eventually(t, 30*time.Second, "binding suspended", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "nginx"))
		if err != nil {
			return false, err.Error()
		}
		s := rb.Spec.Suspension
		return s != nil && s.Dispatching != nil && *s.Dispatching, fmt.Sprintf("%+v", s)
	})
	rbKey := client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", "nginx")}
	waitDispatching(ctx, t, c, &workv1alpha2.ResourceBinding{}, rbKey, metav1.ConditionFalse, workv1alpha2.BindingReasonSuspendDispatching)
	waitEvent(ctx, t, c, ns, "nginx", events.WorkDispatching, "Dispatching is suspended")
	patch := client.MergeFrom(tpl.DeepCopy())
	tpl.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	if err := c.Patch(ctx, tpl, patch); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // what would have been plenty to deliver it
	if got := imageIn(); got != "nginx:1.27" {
		t.Fatalf("member1 got %s while dispatching was suspended", got)
	}
	setSuspended(false)
	framework.Eventually(t, 60*time.Second, "nginx:1.28 delivered after resuming", func() (bool, string) { return imageIn() == "nginx:1.28", imageIn() })
	waitDispatching(ctx, t, c, &workv1alpha2.ResourceBinding{}, rbKey, metav1.ConditionTrue, workv1alpha2.BindingReasonDispatching)
	waitEvent(ctx, t, c, ns, "nginx", events.WorkDispatching, "Dispatching resumed")
}

// TestSuspendedClusterDispatching is TestSuspendedDispatching through a
// ClusterPropagationPolicy and a cluster-scoped template (Karmada's
// "suspend the CPP dispatching", which reads its Works' Dispatching
// condition; atoll keeps that condition on the binding): the
// ClusterResourceBinding is suspended, says so, and the members' copies
// keep the old rules until dispatching resumes.
func TestSuspendedClusterDispatching(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-suspended"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	cpp := utiltesting.MakePropagationPolicy("e2e-suspended", "").Select("rbac.authorization.k8s.io/v1", "ClusterRole", role.Name).
		ClusterNames(members...).ClusterObj()
	cpp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
	framework.CreateAndCleanup(t, c, role)
	// Created suspended: nothing reaches the members.
	framework.CreateAndCleanup(t, c, cpp)
	key := client.ObjectKey{Name: names.BindingName("ClusterRole", role.Name)}
	waitDispatching(ctx, t, c, &workv1alpha2.ClusterResourceBinding{}, key, metav1.ConditionFalse, workv1alpha2.BindingReasonSuspendDispatching)
	var crb workv1alpha2.ClusterResourceBinding
	if err := c.Get(ctx, key, &crb); err != nil {
		t.Fatal(err)
	}
	if s := crb.Spec.Suspension; s == nil || !ptr.Deref(s.Dispatching, false) {
		t.Fatalf("ClusterResourceBinding suspension %+v, want dispatching true", s)
	}
	for _, m := range members {
		if _, err := world.MemberClientset(t, m).RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s has the ClusterRole while dispatching is suspended (err %v)", m, err)
		}
	}
	framework.Update(t, c, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) { p.Spec.Suspension = nil })
	waitDispatching(ctx, t, c, &workv1alpha2.ClusterResourceBinding{}, key, metav1.ConditionTrue, workv1alpha2.BindingReasonDispatching)
	for _, m := range members {
		framework.Eventually(t, time.Minute, "the ClusterRole in "+m+" once dispatching resumes", func() (bool, string) {
			_, err := world.MemberClientset(t, m).RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
			return err == nil, errString(err)
		})
	}
}

// waitDispatching waits for the binding's Dispatching condition.
func waitDispatching(ctx context.Context, t *testing.T, c client.Client, b client.Object, key client.ObjectKey, status metav1.ConditionStatus, reason string) {
	t.Helper()
	framework.Eventually(t, time.Minute, "Dispatching "+string(status)+"/"+reason+" on "+key.String(), func() (bool, string) {
		if err := c.Get(ctx, key, b); err != nil {
			return false, err.Error()
		}
		var conds []metav1.Condition
		switch b := b.(type) {
		case *workv1alpha2.ResourceBinding:
			conds = b.Status.Conditions
		case *workv1alpha2.ClusterResourceBinding:
			conds = b.Status.Conditions
		}
		cond := meta.FindStatusCondition(conds, workv1alpha2.Dispatching)
		if cond == nil {
			return false, "no Dispatching condition"
		}
		return cond.Status == status && cond.Reason == reason, fmt.Sprintf("%s/%s: %s", cond.Status, cond.Reason, cond.Message)
	})
}

// waitEvent waits for an event of reason on the object ns/name whose
// message contains want.
func waitEvent(ctx context.Context, t *testing.T, c client.Client, ns, name, reason, want string) {
	t.Helper()
	framework.Eventually(t, time.Minute, reason+" event on "+ns+"/"+name, func() (bool, string) {
		msgs, err := framework.EventMessages(ctx, c, ns, name, reason)
		if err != nil {
			return false, err.Error()
		}
		for _, m := range msgs {
			if strings.Contains(m, want) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("messages %q", msgs)
	})
}
