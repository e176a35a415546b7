package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

type rl = map[corev1.ResourceName]string

func clusterRef(name string) *clusterv1alpha1.Cluster {
	cl := &clusterv1alpha1.Cluster{}
	cl.Name = name
	return cl
}

func TestStaticWeightsHouseMonotonicity(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("mono-1").Obj())
	createCluster(t, c, readyCluster("mono-2").Obj())

	rb := utiltesting.MakeBinding("mono-deployment", namespace).Resource("apps/v1", "Deployment", "mono").Replicas(7).
		ResourceUID(types.UID("")).
		Placement(utiltesting.MakePlacement().ClusterWeight("mono-1", 1).ClusterWeight("mono-2", 2).Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "mono-1:2 mono-2:5")

	// 7 → 8 never takes a replica away from a cluster.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 8 })
	waitScheduled(t, c, rb, "mono-1:3 mono-2:5")
}

func TestDynamicWeightsFollowCapacity(t *testing.T) {
	c := startScheduler(t)
	// 6, 12 and 18 replicas of one CPU fit.
	createCluster(t, c, readyCluster("dyn-1").ResourceSummary(rl{"cpu": "8", "pods": "110"}, rl{"cpu": "2"}).Obj())
	createCluster(t, c, readyCluster("dyn-2").ResourceSummary(rl{"cpu": "12", "pods": "110"}, nil).Obj())
	createCluster(t, c, readyCluster("dyn-3").ResourceSummary(rl{"cpu": "18", "pods": "110"}, nil).Obj())
	// A static binding over the same clusters, which summary changes must
	// not touch.
	static := utiltesting.MakeBinding("dyn-static-deployment", namespace).Resource("apps/v1", "Deployment", "dyn-static").Replicas(3).
		Placement(utiltesting.MakePlacement().ClusterNames("dyn-1", "dyn-2", "dyn-3").Divided("").Obj()).Obj()
	framework.CreateAndCleanup(t, c, static)
	waitScheduled(t, c, static, "dyn-1:1 dyn-2:1 dyn-3:1")

	rb := utiltesting.MakeBinding("dyn-deployment", namespace).Resource("apps/v1", "Deployment", "dyn").Replicas(12).
		ResourceRequest(rl{"cpu": "1"}).
		Placement(utiltesting.MakePlacement().ClusterNames("dyn-1", "dyn-2", "dyn-3").DynamicWeight().Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "dyn-1:2 dyn-2:4 dyn-3:6")

	// Steady scale up: 6 more by available replicas (6/12/18) onto the result.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 18 })
	waitScheduled(t, c, rb, "dyn-1:3 dyn-2:6 dyn-3:9")
	// Scale down in proportion to the previous result.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 6 })
	waitScheduled(t, c, rb, "dyn-1:1 dyn-2:2 dyn-3:3")

	// More than the clusters hold: Unschedulable, the result is kept.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 50 })
	waitUnschedulable(t, c, rb, workv1alpha2.BindingReasonUnschedulable,
		"3/3 clusters are available: ReplicaAssignment: clusters have 36 available replicas in total, 44 needed.")
	if spec, _ := bindingState(rb); formatTargets(spec.Clusters) != "dyn-1:1 dyn-2:2 dyn-3:3" {
		t.Fatalf("the previous result was not kept: %v", spec.Clusters)
	}

	// dyn-3 grows (a resource summary change alone): the binding is retried
	// and the 44 new replicas go by available replicas 6/12/50.
	staticRV := static.ResourceVersion
	cl := clusterRef("dyn-3")
	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(cl), cl); err != nil {
		t.Fatal(err)
	}
	cl.Status.ResourceSummary.Allocatable[corev1.ResourceCPU] = resource.MustParse("50")
	if err := c.Status().Update(framework.Context(t, timeout), cl); err != nil {
		t.Fatal(err)
	}
	waitScheduled(t, c, rb, "dyn-1:5 dyn-2:10 dyn-3:35")
	framework.Consistently(t, 2*time.Second, "static binding unchanged", func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(static), static); err != nil {
			return false, err.Error()
		}
		return static.ResourceVersion == staticRV, fmt.Sprintf("resourceVersion %s → %s", staticRV, static.ResourceVersion)
	})
}

func TestAggregated(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("agg-1").ResourceSummary(rl{"cpu": "4"}, nil).Obj())
	createCluster(t, c, readyCluster("agg-2").ResourceSummary(rl{"cpu": "10"}, nil).Obj())
	rb := utiltesting.MakeBinding("agg-deployment", namespace).Resource("apps/v1", "Deployment", "agg").Replicas(8).
		ResourceRequest(rl{"cpu": "1"}).
		Placement(utiltesting.MakePlacement().ClusterNames("agg-1", "agg-2").Divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated).Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "agg-2:8")
	// 4 more do not fit in agg-2's remaining 10: the largest-first prefix
	// is agg-2 (holding replicas) then agg-1, split 10:4.
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 20 })
	waitScheduled(t, c, rb, "agg-1:3 agg-2:17")
}

func TestSpreadConstraints(t *testing.T) {
	c := startScheduler(t)
	sel := map[string]string{"suite": "spread"}
	createCluster(t, c, readyCluster("sp-1").Label("suite", "spread").Label("team", "red").Region("east").Zones("east-a").Obj())
	createCluster(t, c, readyCluster("sp-2").Label("suite", "spread").Label("team", "red").Region("east").Zones("east-b").Obj())
	createCluster(t, c, readyCluster("sp-3").Label("suite", "spread").Label("team", "blue").Region("west").Zones("west-a").Obj())

	byRegion := utiltesting.MakeBinding("sp-region-deployment", namespace).Resource("apps/v1", "Deployment", "sp-region").Replicas(2).
		Placement(utiltesting.MakePlacement().MatchLabels(sel).
			SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 2).SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj()).Obj()
	framework.CreateAndCleanup(t, c, byRegion)
	waitScheduled(t, c, byRegion, "sp-1:2 sp-3:2")

	byZone := utiltesting.MakeBinding("sp-zone-deployment", namespace).Resource("apps/v1", "Deployment", "sp-zone").Replicas(4).
		Placement(utiltesting.MakePlacement().MatchLabels(sel).Divided("").
			SpreadBy(policyv1alpha1.SpreadByFieldZone, 2, 2).SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 0).Obj()).Obj()
	framework.CreateAndCleanup(t, c, byZone)
	waitScheduled(t, c, byZone, "sp-1:2 sp-2:2")

	byLabel := utiltesting.MakeBinding("sp-label-deployment", namespace).Resource("apps/v1", "Deployment", "sp-label").Replicas(1).
		Placement(utiltesting.MakePlacement().MatchLabels(sel).
			SpreadByLabel("team", 2, 2).SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2).Obj()).Obj()
	framework.CreateAndCleanup(t, c, byLabel)
	waitScheduled(t, c, byLabel, "sp-1:1 sp-3:1")

	// Karmada's spread-by-region spec: one cluster at most, two regions
	// exactly. The regions win: the best cluster of each.
	karmadaCase := utiltesting.MakeBinding("sp-karmada-deployment", namespace).Resource("apps/v1", "Deployment", "sp-karmada").Replicas(1).
		Placement(utiltesting.MakePlacement().MatchLabels(sel).
			SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 1).SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 2).Obj()).Obj()
	framework.CreateAndCleanup(t, c, karmadaCase)
	waitScheduled(t, c, karmadaCase, "sp-1:1 sp-3:1")

	// Three regions wanted, two exist: Unschedulable until a third appears.
	three := utiltesting.MakeBinding("sp-three-deployment", namespace).Resource("apps/v1", "Deployment", "sp-three").Replicas(1).
		Placement(utiltesting.MakePlacement().MatchLabels(sel).SpreadBy(policyv1alpha1.SpreadByFieldRegion, 3, 0).
			SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 0).Obj()).Obj()
	framework.CreateAndCleanup(t, c, three)
	waitUnschedulable(t, c, three, workv1alpha2.BindingReasonUnschedulable,
		"3/3 clusters are available: SpreadConstraint: spread constraint region: minGroups 3 but only 2 regions have feasible clusters.")
	createCluster(t, c, readyCluster("sp-4").Label("suite", "spread").Region("north").Zones("north-a").Obj())
	waitScheduled(t, c, three, "sp-1:1 sp-2:1 sp-3:1 sp-4:1")
}

func TestAffinityTiers(t *testing.T) {
	c := startScheduler(t)
	createCluster(t, c, readyCluster("tier-1").Label("tier", "primary").Taint("maintenance", "", corev1.TaintEffectNoSchedule).Obj())
	createCluster(t, c, readyCluster("tier-2").Label("tier", "backup").Obj())

	rb := utiltesting.MakeBinding("tier-deployment", namespace).Resource("apps/v1", "Deployment", "tier").Replicas(2).
		Placement(utiltesting.MakePlacement().
			AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"tier-1"}}).
			AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"tier-2"}}).Obj()).Obj()
	framework.CreateAndCleanup(t, c, rb)
	waitScheduled(t, c, rb, "tier-2:2")
	if _, status := bindingState(rb); status.SchedulerObservedAffinityName != "backup" {
		t.Fatalf("schedulerObservingAffinityName = %q, want backup", status.SchedulerObservedAffinityName)
	}

	// A NoExecute taint on the cluster a binding runs on does not move it:
	// evicting is failover's decision (tolerationSeconds, pacing, never the
	// last copy), not the scheduler's. A new binding fits neither tier,
	// and the message names both terms.
	framework.Update(t, c, clusterRef("tier-2"), func(cl *clusterv1alpha1.Cluster) {
		cl.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
	})
	late := utiltesting.MakeBinding("tier-late-deployment", namespace).Resource("apps/v1", "Deployment", "tier-late").Replicas(2).
		Placement(rb.Spec.Placement.DeepCopy()).Obj()
	framework.CreateAndCleanup(t, c, late)
	waitUnschedulable(t, c, late, workv1alpha2.BindingReasonNoClusterFit,
		`no clusterAffinities term fits: term "primary": 0/2 clusters are available: 1 cluster(s) did not match clusterAffinities term "primary", 1 cluster(s) had untolerated taint {maintenance: NoSchedule}; term "backup": 0/2 clusters are available: 1 cluster(s) did not match clusterAffinities term "backup", 1 cluster(s) had untolerated taint {maintenance: NoExecute}.`)
	waitScheduled(t, c, rb, "tier-2:2")

	// The first tier's cluster recovers; a fresh reschedule starts from the
	// first term again.
	framework.Update(t, c, clusterRef("tier-1"), func(cl *clusterv1alpha1.Cluster) { cl.Spec.Taints = nil })
	framework.Update(t, c, rb, func(b *workv1alpha2.ResourceBinding) {
		now := metavNow()
		b.Spec.RescheduleTriggeredAt = &now
	})
	waitScheduled(t, c, rb, "tier-1:2")
	if _, status := bindingState(rb); status.SchedulerObservedAffinityName != "primary" {
		t.Fatalf("schedulerObservingAffinityName = %q, want primary", status.SchedulerObservedAffinityName)
	}
}

func metavNow() metav1.Time { return metav1.NewTime(time.Now().Add(time.Second)) }
