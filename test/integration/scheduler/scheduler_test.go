package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

func TestDuplicatedAndAPIEnablement(t *testing.T) {
	c := startScheduler(t)
	for _, cl := range []*clusterv1alpha1.Cluster{
		readyCluster("dup-1").Obj(), readyCluster("dup-2").Obj(), readyCluster("dup-3").Obj(),
		// Reports its APIs, without apps/v1: no Deployments.
		utiltesting.MakeCluster("dup-4").Ready().APIEnablement("v1", "ConfigMap", "Namespace").Obj(),
		// Has not reported its APIs yet: kept.
		utiltesting.MakeCluster("dup-5").Obj(),
	} {
		createCluster(t, c, cl)
	}

	// No placement: every cluster, Duplicated.
	rb := utiltesting.MakeBinding("web-deployment", namespace).Resource("apps/v1", "Deployment", "web").Replicas(3).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "dup-1:3 dup-2:3 dup-3:3 dup-5:3")

	// A cluster-scoped template, explicitly Duplicated, not a workload.
	crb := utiltesting.MakeBinding("team-a-namespace", "").Resource("v1", "Namespace", "team-a").
		Placement(utiltesting.MakePlacement().Duplicated().Obj()).ClusterObj()
	framework.CreateAndCleanup(t, c, crb)
	waitScheduled(t, c, crb, "dup-1:0 dup-2:0 dup-3:0 dup-4:0 dup-5:0")

	// Scaling updates every copy.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 5 })
	waitScheduled(t, c, rb, "dup-1:5 dup-2:5 dup-3:5 dup-5:5")
}

func TestDividedStaticWeights(t *testing.T) {
	c := startScheduler(t)
	for _, n := range []string{"div-1", "div-2", "div-3", "div-4"} {
		createCluster(t, c, readyCluster(n).Obj())
	}
	placement := utiltesting.MakePlacement().ClusterNames("div-1", "div-2", "div-3", "div-4").
		ClusterWeight("div-1", 3).ClusterWeight("div-2", 2).ClusterWeight("div-3", 1).Obj()
	rb := utiltesting.MakeBinding("divided-deployment", namespace).Resource("apps/v1", "Deployment", "divided").
		ResourceUID(types.UID("a")).Replicas(12).Placement(placement).Obj()
	framework.CreateAndCleanup(t, c, rb)
	// div-4 has no weight: no replicas, not listed.
	waitScheduled(t, c, rb, "div-1:6 div-2:4 div-3:2")

	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 14 })
	waitScheduled(t, c, rb, "div-1:7 div-2:5 div-3:2")

	// Equal weights and a tie broken by the resource UID's hash:
	// fnv1a32("a") is even (names ascending), fnv1a32("b") odd (descending).
	equal := utiltesting.MakePlacement().ClusterNames("div-1", "div-2").Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted).Obj()
	asc := utiltesting.MakeBinding("asc-deployment", namespace).Resource("apps/v1", "Deployment", "asc").
		ResourceUID("a").Replicas(3).Placement(equal).Obj()
	desc := utiltesting.MakeBinding("desc-deployment", namespace).Resource("apps/v1", "Deployment", "desc").
		ResourceUID("b").Replicas(3).Placement(equal).Obj()
	framework.CreateAndCleanup(t, c, asc)
	framework.CreateAndCleanup(t, c, desc)
	waitScheduled(t, c, asc, "div-1:2 div-2:1")
	waitScheduled(t, c, desc, "div-1:1 div-2:2")
}

func TestClusterAffinity(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("aff-1").Label("env", "prod").Region("east").Obj())
	createCluster(t, c, readyCluster("aff-2").Label("env", "prod").Region("west").Obj())
	createCluster(t, c, readyCluster("aff-3").Label("env", "dev").Region("east").Zones("east-a").Obj())

	cases := map[string]struct {
		placement *policyv1alpha1.Placement
		want      string
	}{
		"label-selector": {
			placement: utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).Obj(),
			want:      "aff-1:2 aff-2:2",
		},
		"field-selector": {
			placement: utiltesting.MakePlacement().FieldRequirement("region", corev1.NodeSelectorOpIn, "east").Obj(),
			want:      "aff-1:2 aff-3:2",
		},
		"zone": {
			placement: utiltesting.MakePlacement().FieldRequirement("zone", corev1.NodeSelectorOpIn, "east-a", "east-b").Obj(),
			want:      "aff-3:2",
		},
		"exclude": {
			placement: utiltesting.MakePlacement().ClusterNames("aff-1", "aff-2", "aff-3").Exclude("aff-2").Obj(),
			want:      "aff-1:2 aff-3:2",
		},
	}
	var bindings []*workv1alpha2.ResourceBinding
	var wants []string
	for name, tc := range cases {
		rb := utiltesting.MakeBinding(name+"-deployment", namespace).Resource("apps/v1", "Deployment", name).
			Replicas(2).Placement(tc.placement).Obj()
		framework.CreateAndCleanup(t, c, rb)
		bindings, wants = append(bindings, rb), append(wants, tc.want)
	}
	for i, rb := range bindings {
		waitScheduled(t, c, rb, wants[i])
	}
}

func TestTaintToleration(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("taint-1").Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).Obj())
	createCluster(t, c, readyCluster("taint-2").Obj())

	avoid := utiltesting.MakeBinding("avoid-deployment", namespace).Resource("apps/v1", "Deployment", "avoid").Replicas(1).
		Placement(utiltesting.MakePlacement().ClusterNames("taint-1", "taint-2").Obj()).Obj()
	tolerate := utiltesting.MakeBinding("tolerate-deployment", namespace).Resource("apps/v1", "Deployment", "tolerate").Replicas(1).
		Placement(utiltesting.MakePlacement().ClusterNames("taint-1", "taint-2").Toleration(corev1.Toleration{
			Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
		}).Obj()).Obj()
	framework.CreateAndCleanup(t, c, avoid)
	framework.CreateAndCleanup(t, c, tolerate)
	waitScheduled(t, c, avoid, "taint-2:1")
	waitScheduled(t, c, tolerate, "taint-1:1 taint-2:1")
}

func TestUnschedulableUntilAClusterFits(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("none-1").Label("env", "dev").Obj())
	createCluster(t, c, readyCluster("none-2").Label("env", "dev").Obj())
	createCluster(t, c, readyCluster("none-3").Label("env", "prod").Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).Obj())

	rb := utiltesting.MakeBinding("nowhere-deployment", namespace).Resource("apps/v1", "Deployment", "nowhere").Replicas(2).
		Placement(utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitUnschedulable(t, c, rb, workv1alpha2.BindingReasonNoClusterFit,
		"0/3 clusters are available: 2 cluster(s) did not match clusterAffinity, 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}.")
	if spec, _ := bindingState(rb); len(spec.Clusters) != 0 {
		t.Fatalf("an unschedulable binding got clusters %v", spec.Clusters)
	}

	// A Cluster event retries it: the taint goes away.
	cl := &clusterv1alpha1.Cluster{}
	cl.Name = "none-3"
	framework.Update(t, c, cl, func(cl *clusterv1alpha1.Cluster) { cl.Spec.Taints = nil })
	waitScheduled(t, c, rb, "none-3:2")

	// The cluster becomes unreachable again (NoSchedule): the workload
	// stays; and when nothing fits any more, the previous result is kept.
	framework.Update(t, c, cl, func(cl *clusterv1alpha1.Cluster) {
		cl.Spec.Taints = []corev1.Taint{{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}}
		cl.Labels["env"] = "dev"
	})
	waitUnschedulable(t, c, rb, workv1alpha2.BindingReasonNoClusterFit,
		"0/3 clusters are available: 3 cluster(s) did not match clusterAffinity.")
	if spec, _ := bindingState(rb); formatTargets(spec.Clusters) != "none-3:2" {
		t.Fatalf("the previous result was not kept: %v", spec.Clusters)
	}
}

func TestRescheduleOnClusterLabels(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("relabel-1").Label("env", "prod").Obj())
	createCluster(t, c, readyCluster("relabel-2").Label("env", "dev").Obj())

	rb := utiltesting.MakeBinding("relabel-deployment", namespace).Resource("apps/v1", "Deployment", "relabel").Replicas(4).
		Placement(utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).
			Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted).Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "relabel-1:4")

	c2 := &clusterv1alpha1.Cluster{}
	c2.Name = "relabel-2"
	framework.Update(t, c, c2, func(cl *clusterv1alpha1.Cluster) { cl.Labels["env"] = "prod" })
	waitScheduled(t, c, rb, "relabel-1:2 relabel-2:2")
	// A cluster joining the placement of a running Divided workload is a
	// move: handed to the rebalance controller (not running here), not
	// written to spec.clusters.
	if spec, _ := bindingState(rb); formatTargets(spec.Clusters) != "relabel-1:4" {
		t.Errorf("spec.clusters %q, want relabel-1:4 kept while the move is handed over", formatTargets(spec.Clusters))
	}
	_, status := bindingState(rb)
	scheduledAt := status.LastScheduledTime.DeepCopy()

	// Changes no plugin reads cause no write to the binding. The hand-over
	// attempt writes the target, then its status: let both land first.
	var rv string
	framework.Eventually(t, 10*time.Second, "binding settled", func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err.Error()
		}
		before := rb.ResourceVersion
		time.Sleep(time.Second)
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err.Error()
		}
		rv = rb.ResourceVersion
		return rv == before, "resourceVersion " + before + " → " + rv
	})
	framework.Update(t, c, c2, func(cl *clusterv1alpha1.Cluster) { cl.Labels["team"] = "a" })
	c2.Status.KubernetesVersion = "v1.37.2"
	if err := c.Status().Update(framework.Context(t, timeout), c2); err != nil {
		t.Fatal(err)
	}
	framework.Consistently(t, 3*time.Second, "binding unchanged", func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err.Error()
		}
		return rb.ResourceVersion == rv, fmt.Sprintf("resourceVersion %s → %s: %+v", rv, rb.ResourceVersion, rb.Status)
	})

	c1 := &clusterv1alpha1.Cluster{}
	c1.Name = "relabel-1"
	framework.Update(t, c, c1, func(cl *clusterv1alpha1.Cluster) { cl.Labels["env"] = "dev" })
	waitScheduled(t, c, rb, "relabel-2:4")
	if _, status := bindingState(rb); status.LastScheduledTime.Before(scheduledAt) {
		t.Errorf("lastScheduledTime went back: %v → %v", scheduledAt, status.LastScheduledTime)
	}
}

// TestStatusHandoffWithoutExecutor: with a status handoff and no executor
// to take it, the scheduler writes a new placement's status itself once
// the wait for a queued binding ends, so the binding still shows Scheduled.
func TestStatusHandoffWithoutExecutor(t *testing.T) {
	c, handoff, rb := withHandoff(t, "handoff")
	ctx := framework.Context(t, timeout)
	framework.Eventually(t, timeout, "placement written, its status handed over", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.Clusters) == 1 && handoff.Len() == 1, fmt.Sprintf("clusters %v, %d pending", rb.Spec.Clusters, handoff.Len())
	})
	waitScheduled(t, c, rb, "handoff-1:2")
	if n := handoff.Len(); n != 0 {
		t.Fatalf("%d parts still pending after the scheduler wrote the status", n)
	}
}

// TestNewGenerationHandedOver: a placed binding whose spec changes without
// moving its placement (a template change) does not get a status write of
// the scheduler's own: its part (the observed generation, the condition's
// generation) waits for the executor's write of that generation, which the
// executor makes anyway (design 0013, decision 50). With no executor to
// take it, the scheduler writes it itself once the wait for a queued
// binding ends, so the binding still shows the generation observed.
func TestNewGenerationHandedOver(t *testing.T) {
	c, handoff, rb := withHandoff(t, "regen")
	waitScheduled(t, c, rb, "regen-1:2")
	observed := rb.Generation

	// The template changed: the detector records its new resourceVersion.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.ResourceVersion = "2" })
	ctx := framework.Context(t, timeout)
	framework.Eventually(t, timeout, "the new generation's part handed over, not written", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err.Error()
		}
		part, pending := handoff.Pending(rb.UID, rb.Generation)
		if rb.Status.SchedulerObservedGeneration != observed {
			t.Fatalf("the scheduler wrote generation %d's status itself (observed %d) while a part could wait for the executor", rb.Generation, rb.Status.SchedulerObservedGeneration)
		}
		return pending && part.Condition.ObservedGeneration == rb.Generation,
			fmt.Sprintf("generation %d, pending %v (%+v)", rb.Generation, pending, part)
	})
	if rb.Generation != observed+1 || formatTargets(rb.Spec.Clusters) != "regen-1:2" {
		t.Fatalf("generation %d (want %d), clusters %v: the placement was written again", rb.Generation, observed+1, rb.Spec.Clusters)
	}
	// Nobody takes it: the scheduler writes it after the queued bound.
	waitScheduled(t, c, rb, "regen-1:2")
	if n := handoff.Len(); n != 0 {
		t.Fatalf("%d parts still pending after the scheduler wrote the status", n)
	}
}
