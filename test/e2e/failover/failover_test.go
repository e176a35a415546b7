package failover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var allMembers = []string{"member1", "member2", "member3"}

// tolerateFailure tolerates the health taints for seconds.
func tolerateFailure(seconds int64) []corev1.Toleration {
	var out []corev1.Toleration
	for _, key := range []string{clusterv1alpha1.TaintClusterNotReady, clusterv1alpha1.TaintClusterUnreachable} {
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)})
	}
	return out
}

func clusterNames(rb *workv1alpha2.ResourceBinding) []string {
	var out []string
	for _, t := range rb.Spec.Clusters {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func task(rb *workv1alpha2.ResourceBinding, cluster string) *workv1alpha2.GracefulEvictionTask {
	for i := range rb.Spec.GracefulEvictionTasks {
		if rb.Spec.GracefulEvictionTasks[i].FromCluster == cluster {
			return &rb.Spec.GracefulEvictionTasks[i]
		}
	}
	return nil
}

func describe(rb *workv1alpha2.ResourceBinding) string {
	var tasks []string
	for _, t := range rb.Spec.GracefulEvictionTasks {
		tasks = append(tasks, t.FromCluster+"/"+t.Reason+"/"+string(t.PurgeMode))
	}
	return fmt.Sprintf("clusters=%v tasks=%v conditions=%v", clusterNames(rb), tasks, rb.Status.Conditions)
}

// memberUID is the UID of the Deployment in a member ("" when absent).
func memberUID(ctx context.Context, t *testing.T, cluster, ns, name string) types.UID {
	d, err := world.MemberClientset(t, cluster).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return d.UID
}

// hasEvent reports whether an event with reason is recorded for the object
// named name in ns.
func hasEvent(ctx context.Context, c client.Client, ns, name, reason string) bool {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return false
	}
	return slices.ContainsFunc(list.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name == name && e.Reason == reason
	})
}

// metric returns the value of one sample of the controller-manager's
// metrics, e.g. `atoll_failover_evictions_total{producer="TaintManager",result="evicted"}`.
func metric(t *testing.T, sample string) float64 {
	t.Helper()
	v, err := framework.ScrapeMetrics(t, metricsAddr).Value(sample)
	if err != nil {
		t.Fatalf("metric %s: %v", sample, err)
	}
	return v
}

// TestClusterFailoverStop is the first check: app web-stop with an
// HPA in each member (Duplicated), load on. member1 stops: the world sends
// its traffic to member2/member3 at once and their HPAs scale up with no
// federation involved; after tolerationSeconds the bindings leave member1
// (graceful eviction tasks record it); the Ready capacity in the reachable
// clusters recovers to what the load needs. member1 returns: it is
// reconciled, not wiped, and the placement goes back to it.
func TestClusterFailoverStop(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-stop", "web-stop"
	placement := policyv1alpha1.Placement{
		ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: allMembers},
		ClusterTolerations: tolerateFailure(10),
	}
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(1).Request(corev1.ResourceCPU, "200m").Obj(), framework.HPA(app, ns, 10),
		utiltesting.MakePropagationPolicy("web", ns).Placement(&placement).
			Select("apps/v1", "Deployment", "").Select("autoscaling/v2", "HorizontalPodAutoscaler", "").Obj())
	world.Load(t, app, "900m")
	t.Cleanup(func() { world.Load(t, app, "0") })

	// 900m over three members: 300m each, 100m per pod at target → 3 each.
	framework.Eventually(t, 4*time.Minute, "3±1 Ready pods in every member", func() (bool, string) {
		var got []int
		ok := true
		for _, m := range allMembers {
			n, _ := framework.ReadyPods(ctx, world.MemberClientset(t, m), ns, app)
			got = append(got, n)
			ok = ok && n >= 2 && n <= 4
		}
		return ok, fmt.Sprintf("ready per member %v", got)
	})
	uid := memberUID(ctx, t, "member1", ns, app)

	stopped := time.Now()
	start := world.InjectFault(t, "member1", "stop", "start")

	// Traffic and HPAs first: 900m over two members needs ≥9 pods.
	var capacityBack time.Duration
	framework.Eventually(t, 3*time.Minute, "member2+member3 carry the load (≥9 Ready pods)", func() (bool, string) {
		a, _ := framework.ReadyPods(ctx, world.MemberClientset(t, "member2"), ns, app)
		b, _ := framework.ReadyPods(ctx, world.MemberClientset(t, "member3"), ns, app)
		capacityBack = time.Since(stopped)
		return a+b >= 9, fmt.Sprintf("ready member2=%d member3=%d", a, b)
	})
	t.Logf("capacity restored in member2+member3 %.1fs after member1 stopped", capacityBack.Seconds())

	var evictedAfter time.Duration
	framework.Eventually(t, 2*time.Minute, "bindings evicted from member1 with a task", func() (bool, string) {
		var msgs []string
		ok := true
		for _, kind := range []string{"Deployment", "HorizontalPodAutoscaler"} {
			rb, err := framework.GetBinding(ctx, c, ns, names.BindingName(kind, app))
			if err != nil {
				return false, err.Error()
			}
			tk := task(rb, "member1")
			ok = ok && slices.Equal(clusterNames(rb), []string{"member2", "member3"}) && tk != nil &&
				tk.Reason == workv1alpha2.EvictionReasonTaintUntolerated && tk.Producer == workv1alpha2.EvictionProducerTaintManager &&
				tk.PurgeMode == policyv1alpha1.PurgeModeGracefully
			msgs = append(msgs, kind+": "+describe(rb))
		}
		evictedAfter = time.Since(stopped)
		return ok, strings.Join(msgs, "; ")
	})
	t.Logf("bindings left member1 %.1fs after it stopped (failure threshold 3s + tolerationSeconds 10s)", evictedAfter.Seconds())
	if evictedAfter < 10*time.Second {
		t.Errorf("evicted %.1fs after the stop, before tolerationSeconds (10s) ran out", evictedAfter.Seconds())
	}
	framework.Eventually(t, 30*time.Second, "Evicted event on the binding", func() (bool, string) {
		return hasEvent(ctx, c, ns, names.BindingName("Deployment", app), "Evicted"), "no event yet"
	})
	var clusterEvents corev1.EventList
	_ = c.List(ctx, &clusterEvents)
	if !slices.ContainsFunc(clusterEvents.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name == "member1" && e.Reason == "TaintsChanged" && strings.Contains(e.Message, "NoExecute")
	}) {
		t.Errorf("no TaintsChanged event naming the NoExecute taint on cluster member1")
	}

	start()
	framework.Eventually(t, 2*time.Minute, "member1 back in the placement, tasks gone", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(clusterNames(rb), allMembers) && len(rb.Spec.GracefulEvictionTasks) == 0, describe(rb)
	})
	if got := memberUID(ctx, t, "member1", ns, app); got != uid {
		t.Errorf("member1's Deployment was recreated (uid %s, was %s): a returning cluster must be reconciled, not wiped", got, uid)
	}
	if n := metric(t, `atoll_failover_evictions_total{producer="TaintManager",result="evicted"}`); n < 2 {
		t.Errorf("atoll_failover_evictions_total evicted = %v, want ≥ 2", n)
	}
	if n := metric(t, `atoll_failover_restore_seconds_count{producer="TaintManager"}`); n < 1 {
		t.Errorf("atoll_failover_restore_seconds_count = %v, want ≥ 1", n)
	}
}

// TestPartitionHeal: member2 is cut off from the federation (it keeps
// running); the binding leaves it after tolerationSeconds, but its copy is
// kept (Gracefully cannot purge what it cannot reach). After heal the
// placement returns to member2 and its objects are intact: same UID, pods
// never gone.
func TestPartitionHeal(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-part", "web-part"
	placement := policyv1alpha1.Placement{ClusterTolerations: tolerateFailure(5)}
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(),
		utiltesting.MakePropagationPolicy("web", ns).Placement(&placement).Select("apps/v1", "Deployment", "").Obj())
	framework.Eventually(t, 2*time.Minute, "2 Ready pods in every member", func() (bool, string) {
		var got []int
		ok := true
		for _, m := range allMembers {
			n, _ := framework.ReadyPods(ctx, world.MemberClientset(t, m), ns, app)
			got = append(got, n)
			ok = ok && n == 2
		}
		return ok, fmt.Sprintf("ready per member %v", got)
	})
	uid := memberUID(ctx, t, "member2", ns, app)

	heal := world.InjectFault(t, "member2", "partition", "heal")
	framework.Eventually(t, 2*time.Minute, "binding left member2 with a task", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(clusterNames(rb), []string{"member1", "member3"}) && task(rb, "member2") != nil, describe(rb)
	})
	if got := memberUID(ctx, t, "member2", ns, app); got != uid {
		t.Fatalf("member2's Deployment changed during the partition (uid %q, was %s)", got, uid)
	}

	heal()
	framework.Eventually(t, 2*time.Minute, "placement back on member2, no stale task", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(clusterNames(rb), allMembers) && len(rb.Spec.GracefulEvictionTasks) == 0 &&
			meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied), describe(rb)
	})
	if got := memberUID(ctx, t, "member2", ns, app); got != uid {
		t.Errorf("member2's Deployment was recreated after heal (uid %q, was %s)", got, uid)
	}
	if n, _ := framework.ReadyPods(ctx, world.MemberClientset(t, "member2"), ns, app); n != 2 {
		t.Errorf("member2 has %d Ready pods after heal, want 2", n)
	}
}

// TestOnlyCandidateIsNeverEmptied: the policy allows only member3, and
// member3 fails. Nothing is deleted and nothing moves; the binding's
// EvictionBlocked condition says why. When member3 returns, all is as
// before (Karmada #7455 deleted the workload here).
func TestOnlyCandidateIsNeverEmptied(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-one", "solo"
	placement := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}}
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(),
		utiltesting.MakePropagationPolicy("solo", ns).Placement(&placement).Select("apps/v1", "Deployment", "").Obj())
	framework.Eventually(t, 2*time.Minute, "2 Ready pods in member3", func() (bool, string) {
		n, err := framework.ReadyPods(ctx, world.MemberClientset(t, "member3"), ns, app)
		return n == 2, fmt.Sprintf("ready=%d err=%v", n, err)
	})
	uid := memberUID(ctx, t, "member3", ns, app)

	start := world.InjectFault(t, "member3", "stop", "start")
	framework.Eventually(t, 2*time.Minute, "EvictionBlocked explains, placement unchanged", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == workv1alpha2.BindingReasonNoAlternativeCluster &&
			strings.Contains(cond.Message, "no other cluster can take the replicas") &&
			slices.Equal(clusterNames(rb), []string{"member3"}) && len(rb.Spec.GracefulEvictionTasks) == 0, describe(rb)
	})
	// Events are written asynchronously, after the condition.
	framework.Eventually(t, 15*time.Second, "EvictionBlocked event on the binding", func() (bool, string) {
		return hasEvent(ctx, c, ns, names.BindingName("Deployment", app), "EvictionBlocked"), "no event yet"
	})

	start()
	framework.Eventually(t, 2*time.Minute, "member3 back, condition gone, all as before", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		n, _ := framework.ReadyPods(ctx, world.MemberClientset(t, "member3"), ns, app)
		return meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked) == nil &&
			slices.Equal(clusterNames(rb), []string{"member3"}) && n == 2, fmt.Sprintf("%s ready=%d", describe(rb), n)
	})
	if got := memberUID(ctx, t, "member3", ns, app); got != uid {
		t.Errorf("member3's Deployment was recreated (uid %q, was %s)", got, uid)
	}
}

// TestApplicationFailover: the Deployment cannot become available in
// member1 (an override asks for more CPU than a node has: member1 is full
// for it). After tolerationSeconds it moves to member2, and the old copy
// is purged only once the new one is healthy (Gracefully).
func TestApplicationFailover(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-app", "flaky"
	pp := utiltesting.MakePropagationPolicy("flaky", ns).Select("apps/v1", "Deployment", "").PropagateDeps().
		Placement(utiltesting.MakePlacement().
			AffinityTerm("first", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}).
			AffinityTerm("second", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}).Obj()).Obj()
	pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](10)},
		PurgeMode:          policyv1alpha1.PurgeModeGracefully,
		GracePeriodSeconds: ptr.To[int32](600),
	}}
	full := utiltesting.MakeOverridePolicy("member1-is-full", ns).Select("apps/v1", "Deployment", app).
		Rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, policyv1alpha1.Overriders{
			Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/spec/template/spec/containers/0/resources/requests/cpu", Operator: policyv1alpha1.OverriderOpReplace,
				Value: apiextensionsv1.JSON{Raw: []byte(`"64"`)},
			}},
		}).Obj()
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, full, framework.Deployment(app, ns).Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(), pp)
	framework.Eventually(t, time.Minute, "propagated to member1 (where it cannot run)", func() (bool, string) {
		return memberUID(ctx, t, "member1", ns, app) != "", "not in member1 yet"
	})

	// Until the old copy is gone, it must be there whenever the new one is
	// not yet available.
	framework.Eventually(t, 3*time.Minute, "moved to member2, old copy purged after the new one is healthy", func() (bool, string) {
		inFirst := memberUID(ctx, t, "member1", ns, app) != ""
		d, err := world.MemberClientset(t, "member2").AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		available := err == nil && d.Status.AvailableReplicas == 2
		if !inFirst && !available {
			t.Fatalf("member1's copy was purged while member2's is not available (err %v)", err)
		}
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return !inFirst && available && slices.Equal(clusterNames(rb), []string{"member2"}) && len(rb.Spec.GracefulEvictionTasks) == 0,
			fmt.Sprintf("in member1=%t member2 available=%t %s", inFirst, available, describe(rb))
	})
	for _, reason := range []string{"Evicted", "EvictionCompleted"} {
		if !hasEvent(ctx, c, ns, names.BindingName("Deployment", app), reason) {
			t.Errorf("no %s event on the binding", reason)
		}
	}
	if n := metric(t, `atoll_failover_evictions_total{producer="ApplicationFailover",result="evicted"}`); n < 1 {
		t.Errorf("atoll_failover_evictions_total for application failover = %v, want ≥ 1", n)
	}
}

// TestFlappingClusterLeavesNoStaleTasks: member3 fails and recovers
// several times, once faster than failover can react. Every eviction ends
// when the cluster is back; no task, empty placement or EvictionBlocked
// condition is left, and member3's copy is the same object throughout
// (Karmada #5803 left stale tasks and empty placements here).
func TestFlappingClusterLeavesNoStaleTasks(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-flap", "flap"
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(1).Request(corev1.ResourceCPU, "50m").Obj(),
		utiltesting.MakePropagationPolicy("flap", ns).Select("apps/v1", "Deployment", "").Obj())
	settled := func(what string) {
		t.Helper()
		framework.Eventually(t, 2*time.Minute, what, func() (bool, string) {
			rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
			if err != nil {
				return false, err.Error()
			}
			return slices.Equal(clusterNames(rb), allMembers) && len(rb.Spec.GracefulEvictionTasks) == 0 &&
				meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked) == nil &&
				meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied), describe(rb)
		})
	}
	settled("propagated to every member")
	uid := memberUID(ctx, t, "member3", ns, app)

	for i := 1; i <= 2; i++ {
		start := world.InjectFault(t, "member3", "stop", "start")
		framework.Eventually(t, time.Minute, fmt.Sprintf("flap %d: evicted from member3", i), func() (bool, string) {
			rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
			if err != nil {
				return false, err.Error()
			}
			return task(rb, "member3") != nil && !slices.Contains(clusterNames(rb), "member3"), describe(rb)
		})
		start()
		settled(fmt.Sprintf("flap %d: back on member3, no task left", i))
	}
	// Faster than the failure threshold: down and up again at once.
	world.InjectFault(t, "member3", "stop", "start")()
	settled("quick flap: all as before")
	if got := memberUID(ctx, t, "member3", ns, app); got != uid {
		t.Errorf("member3's Deployment was recreated while flapping (uid %q, was %s)", got, uid)
	}
}

// TestTaintWithoutTimeAdded: an operator taints member3 NoExecute the way
// kubectl or a script does, without timeAdded. The cluster controller
// stamps it (as Karmada's webhook does), so a placement that tolerates the
// taint for 5s leaves member3 after those 5s; without the stamp the
// toleration would count from "now" at every look and never expire.
func TestTaintWithoutTimeAdded(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	const ns, app = "fo-taint", "drain"
	tolerate := corev1.Toleration{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)}
	placement := policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{tolerate}}
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(1).Obj(),
		utiltesting.MakePropagationPolicy(app, ns).Placement(&placement).Select("apps/v1", "Deployment", app).Obj())
	framework.Eventually(t, 2*time.Minute, "placed on every member", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(clusterNames(rb), allMembers), describe(rb)
	})

	var member3 clusterv1alpha1.Cluster
	member3.Name = "member3"
	framework.Update(t, c, &member3, func(cl *clusterv1alpha1.Cluster) {
		cl.Spec.Taints = append(cl.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
	})
	t.Cleanup(func() {
		framework.Update(t, c, &member3, func(cl *clusterv1alpha1.Cluster) {
			cl.Spec.Taints = slices.DeleteFunc(cl.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == "maintenance" })
		})
	})
	framework.Eventually(t, time.Minute, "the taint stamped with timeAdded", func() (bool, string) {
		cl, err := framework.GetCluster(ctx, c, "member3")
		if err != nil {
			return false, err.Error()
		}
		for _, tn := range cl.Spec.Taints {
			if tn.Key == "maintenance" {
				return tn.TimeAdded != nil, fmt.Sprintf("taint %+v", tn)
			}
		}
		return false, "no maintenance taint"
	})
	framework.Eventually(t, time.Minute, "the placement leaves member3 after tolerationSeconds", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(clusterNames(rb), []string{"member1", "member2"}), describe(rb)
	})
}

// TestStatefulFailover: Karmada's stateful failover injection. A
// Deployment in one cluster, cluster failover Directly with a
// statePreservation rule ({.replicas} as label "state-replicas"). Its
// cluster is tainted NoExecute: the eviction task keeps the state read
// from the old copy's status, the replacement in another cluster carries
// it as a label, and the old copy is gone.
func TestStatefulFailover(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	const ns, app, taintKey = "fo-stateful", "stateful", "stateful-test"
	placement := policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: allMembers},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}},
		ClusterTolerations: []corev1.Toleration{{Key: taintKey, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)}},
	}
	pp := utiltesting.MakePropagationPolicy(app, ns).Placement(&placement).Select("apps/v1", "Deployment", app).Obj()
	pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{
		PurgeMode: policyv1alpha1.PurgeModeDirectly,
		StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
			{AliasLabelName: "state-replicas", JSONPath: "{.replicas}"}}},
	}}
	framework.CreateAndCleanup(t, c, utiltesting.MakeNamespace(ns).Obj())
	framework.Create(t, c, framework.Deployment(app, ns).Replicas(2).Obj(), pp)
	var from string
	framework.Eventually(t, 2*time.Minute, "placed on one cluster, its status collected", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		if len(rb.Spec.Clusters) != 1 || len(rb.Status.AggregatedStatus) != 1 ||
			!strings.Contains(string(ptr.Deref(rb.Status.AggregatedStatus[0].Status, runtime.RawExtension{}).Raw), `"replicas":2`) {
			return false, describe(rb)
		}
		from = rb.Spec.Clusters[0].Name
		return true, ""
	})

	cluster := clusterv1alpha1.Cluster{}
	cluster.Name = from
	framework.Update(t, c, &cluster, func(cl *clusterv1alpha1.Cluster) {
		cl.Spec.Taints = append(cl.Spec.Taints, corev1.Taint{Key: taintKey, Effect: corev1.TaintEffectNoExecute})
	})
	t.Cleanup(func() {
		framework.Update(t, c, &cluster, func(cl *clusterv1alpha1.Cluster) {
			cl.Spec.Taints = slices.DeleteFunc(cl.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == taintKey })
		})
	})
	var to string
	framework.Eventually(t, 2*time.Minute, "moved to another cluster, the task keeping the state", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		tk := task(rb, from)
		if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name == from || tk == nil || tk.PreservedLabelState["state-replicas"] != "2" {
			return false, describe(rb)
		}
		to = rb.Spec.Clusters[0].Name
		return true, ""
	})
	framework.Eventually(t, time.Minute, "the replacement carries the state; the old copy is gone", func() (bool, string) {
		d, err := world.MemberClientset(t, to).AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, oldErr := world.MemberClientset(t, from).AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		return d.Labels["state-replicas"] == "2" && apierrors.IsNotFound(oldErr),
			fmt.Sprintf("labels on %s %v; on %s: %v", to, d.Labels, from, oldErr)
	})
}
