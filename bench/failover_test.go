package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/test/framework"
)

// Workload of BenchmarkClusterFailover.
const (
	foTemplates = 300
	foReplicas  = 3 // Divided 1:1:1 over the three members
	foNamespace = "failover"
)

// BenchmarkClusterFailover measures cluster failover at scale: `atoll up`
// with three members (10 nodes each), 300 Deployments of 3 replicas
// Divided by equal static weights (one replica per member), no
// tolerations. member1 is stopped; failover evicts every binding from it
// (paced by --resource-eviction-rate, default 10/s burst 20) and the
// replicas are placed on member2/member3. Then member1 starts again and
// the placement goes back to it (static weights).
//
// Reported:
//   - evict-all-s: stop → the last binding evicted (member1 out of
//     spec.clusters, a task recorded); includes the 3 s failure threshold;
//   - restore-p50-s, restore-p99-s, restore-max-s: per template, stop →
//     its status shows 3 Ready replicas again on member2/member3 after its
//     eviction (the capacity of the failed cluster restored elsewhere);
//   - evictions/s: bindings evicted ÷ (first → last eviction);
//   - cp-writes/binding: control-plane write requests (Leases excluded)
//     from the stop until all are restored, ÷ 300;
//   - return-all-s: start of member1 → every binding back on member1 with
//     no task left;
//   - member1-recreated: member1 Deployments whose UID changed across the
//     outage (must be 0: the returning cluster is reconciled, not wiped).
func BenchmarkClusterFailover(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runFailoverScenario(b)
	}
}

func runFailoverScenario(b *testing.B) {
	cp := framework.StartControlPlane(b, framework.Options{Members: 3, Args: []string{propMemberArgs,
		"--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s"}})
	ctx := framework.Context(b, 28*time.Minute)
	c := cp.Client(b)
	admin := kubernetes.NewForConfigOrDie(cp.RESTConfig(b))
	waitClustersReady(ctx, b, c, 3)

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: foNamespace}}); err != nil {
		b.Fatal(err)
	}
	var weights []policyv1alpha1.StaticClusterWeight
	for _, m := range propMembers {
		weights = append(weights, policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{m}}, Weight: 1})
	}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: foNamespace},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: propMembers},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference:          &policyv1alpha1.ClusterPreferences{StaticWeightList: weights},
				},
			},
		},
	}
	createPolicy(ctx, b, c, pp)

	createTemplates(ctx, b, cp.RESTConfig(b), foNamespace, foTemplates, foReplicas)
	framework.Eventually(b, 15*time.Minute, "every template 3/3 Ready on three members", func() (bool, string) {
		ready, err := readyTemplates(ctx, c)
		return err == nil && ready == foTemplates, fmt.Sprintf("%d of %d ready (err %v)", ready, foTemplates, err)
	})
	member1 := kubernetes.NewForConfigOrDie(cp.MemberConfig(b, "member1"))
	uidsBefore := memberUIDs(ctx, b, member1)

	before, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	stopped := time.Now()
	cp.Atoll(b, "sim", "fault", "--data-dir", cp.DataDir, "member1", "stop")

	evictedAt := map[string]time.Time{}
	restoredAt := map[string]time.Time{}
	deadline := time.Now().Add(10 * time.Minute)
	lastLog := time.Now()
	for len(restoredAt) < foTemplates {
		if time.Now().After(deadline) {
			b.Fatalf("after 10m: %d evicted, %d restored; atoll.log tail:\n%s", len(evictedAt), len(restoredAt), atollLogTail(cp, 4000))
		}
		now := time.Now()
		var rbs workv1alpha2.ResourceBindingList
		if err := c.List(ctx, &rbs, client.InNamespace(foNamespace)); err != nil {
			b.Fatal(err)
		}
		for _, rb := range rbs.Items {
			name := rb.Spec.Resource.Name
			if _, done := evictedAt[name]; done {
				continue
			}
			on := slices.ContainsFunc(rb.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == "member1" })
			tasked := slices.ContainsFunc(rb.Spec.GracefulEvictionTasks, func(t workv1alpha2.GracefulEvictionTask) bool { return t.FromCluster == "member1" })
			if !on && tasked {
				evictedAt[name] = now
			}
		}
		var deps appsv1.DeploymentList
		if err := c.List(ctx, &deps, client.InNamespace(foNamespace)); err != nil {
			b.Fatal(err)
		}
		for _, d := range deps.Items {
			if _, done := restoredAt[d.Name]; done {
				continue
			}
			if e, ok := evictedAt[d.Name]; ok && now.After(e) && d.Status.ReadyReplicas == foReplicas && d.Status.ObservedGeneration == d.Generation {
				restoredAt[d.Name] = now
			}
		}
		if time.Since(lastLog) >= 10*time.Second {
			b.Logf("t=%v evicted %d restored %d", time.Since(stopped).Round(time.Second), len(evictedAt), len(restoredAt))
			lastLog = time.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
	after, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	writes := after.minus(before).sum(isCountedWrite)

	var firstEvict, lastEvict time.Time
	for _, t := range evictedAt {
		if firstEvict.IsZero() || t.Before(firstEvict) {
			firstEvict = t
		}
		if t.After(lastEvict) {
			lastEvict = t
		}
	}
	restore := make([]float64, 0, len(restoredAt))
	for _, t := range restoredAt {
		restore = append(restore, t.Sub(stopped).Seconds())
	}
	sort.Float64s(restore)
	evictAll := lastEvict.Sub(stopped).Seconds()
	rate := float64(len(evictedAt)) / max(lastEvict.Sub(firstEvict).Seconds(), 0.5)
	b.Logf("evict-all %.1fs (%.1f evictions/s), restore p50 %.1fs p99 %.1fs max %.1fs, %.1f control-plane writes per binding",
		evictAll, rate, percentile(restore, 0.50), percentile(restore, 0.99), restore[len(restore)-1], writes/foTemplates)
	b.Logf("control-plane writes during the failover:\n%s", after.minus(before).table(isCountedWrite, 12))

	started := time.Now()
	cp.Atoll(b, "sim", "fault", "--data-dir", cp.DataDir, "member1", "start")
	framework.Eventually(b, 10*time.Minute, "every binding back on member1, no task left", func() (bool, string) {
		var rbs workv1alpha2.ResourceBindingList
		if err := c.List(ctx, &rbs, client.InNamespace(foNamespace)); err != nil {
			return false, err.Error()
		}
		back := 0
		for _, rb := range rbs.Items {
			if len(rb.Spec.GracefulEvictionTasks) == 0 && slices.ContainsFunc(rb.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == "member1" }) {
				back++
			}
		}
		return back == foTemplates, fmt.Sprintf("%d of %d back", back, foTemplates)
	})
	returnAll := time.Since(started).Seconds()
	uidsAfter := memberUIDs(ctx, b, member1)
	recreated := 0
	for name, uid := range uidsBefore {
		if uidsAfter[name] != uid {
			recreated++
		}
	}
	b.Logf("return-all %.1fs, member1 Deployments recreated %d of %d", returnAll, recreated, len(uidsBefore))

	b.ReportMetric(evictAll, "evict-all-s")
	b.ReportMetric(rate, "evictions/s")
	b.ReportMetric(percentile(restore, 0.50), "restore-p50-s")
	b.ReportMetric(percentile(restore, 0.99), "restore-p99-s")
	b.ReportMetric(restore[len(restore)-1], "restore-max-s")
	b.ReportMetric(writes/foTemplates, "cp-writes/binding")
	b.ReportMetric(returnAll, "return-all-s")
	b.ReportMetric(float64(recreated), "member1-recreated")
	if err := cp.Stop(); err != nil {
		b.Logf("stopping atoll: %v", err)
	}
}

// readyTemplates counts templates whose aggregated status shows all their
// replicas Ready for the current generation.
func readyTemplates(ctx context.Context, c client.Client) (int, error) {
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps, client.InNamespace(foNamespace)); err != nil {
		return 0, err
	}
	n := 0
	for _, d := range deps.Items {
		if d.Status.ReadyReplicas == foReplicas && d.Status.ObservedGeneration == d.Generation {
			n++
		}
	}
	return n, nil
}

func memberUIDs(ctx context.Context, b *testing.B, cs kubernetes.Interface) map[string]types.UID {
	list, err := cs.AppsV1().Deployments(foNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[string]types.UID, len(list.Items))
	for _, d := range list.Items {
		out[d.Name] = d.UID
	}
	return out
}
