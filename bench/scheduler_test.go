package bench

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// BenchmarkScheduleInProcess measures the scheduling framework alone (no
// API server, no cache): 10,000 Divided bindings with static weights over
// 10 clusters, with every in-tree plugin, as the controller runs them.
// Reports bindings scheduled per second.
func BenchmarkScheduleInProcess(b *testing.B) {
	clusters := benchClusters()
	placements := []*policyv1alpha1.Placement{
		// Weights by region, the usual production shape.
		utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).
			StaticWeight(policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"region-0"}}}}}, 3).
			StaticWeight(policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"region-1"}}}}}, 2).
			StaticWeight(policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"tier": "t2"}}}, 1).Obj(),
		// Weights by cluster name.
		func() *policyv1alpha1.Placement {
			p := utiltesting.MakePlacement()
			for i, c := range clusters {
				p.ClusterWeight(c.Name, int64(i+1))
			}
			return p.Obj()
		}(),
		// Equal weights over every cluster that tolerates nothing special.
		utiltesting.MakePlacement().Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted).Obj(),
	}
	benchSchedule(b, clusters, placements)
}

// BenchmarkScheduleInProcessDynamic is BenchmarkScheduleInProcess with
// dynamic weights (available replicas from each cluster's resource
// summary and a CPU/memory request), Aggregated, and dynamic weights with
// a region spread constraint and clusterAffinities tiers.
func BenchmarkScheduleInProcessDynamic(b *testing.B) {
	clusters := benchClusters()
	placements := []*policyv1alpha1.Placement{
		utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).DynamicWeight().Obj(),
		utiltesting.MakePlacement().Divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated).Obj(),
		utiltesting.MakePlacement().DynamicWeight().
			SpreadBy(policyv1alpha1.SpreadByFieldRegion, 2, 2).SpreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 0).
			AffinityTerm("t0", policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "t0"}}}).
			AffinityTerm("all", policyv1alpha1.ClusterAffinity{}).Obj(),
	}
	benchSchedule(b, clusters, placements)
}

// benchClusters are 10 Ready clusters in 3 regions with resource
// summaries (8 to 80 CPUs, 32 to 320 GiB, partly allocated); the last is
// unreachable.
func benchClusters() []*clusterv1alpha1.Cluster {
	const numClusters = 10
	clusters := make([]*clusterv1alpha1.Cluster, numClusters)
	for i := range clusters {
		w := utiltesting.MakeCluster(fmt.Sprintf("member%02d", i)).
			Label("env", "prod").Label("tier", fmt.Sprintf("t%d", i%3)).
			Provider("sim").Region(fmt.Sprintf("region-%d", i%3)).Zones(fmt.Sprintf("zone-%d", i)).Ready().
			APIEnablement("v1", "ConfigMap", "Secret", "Service", "ServiceAccount", "Namespace", "PersistentVolumeClaim").
			APIEnablement("apps/v1", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet").
			APIEnablement("batch/v1", "Job", "CronJob").
			APIEnablement("autoscaling/v2", "HorizontalPodAutoscaler").
			ResourceSummary(map[corev1.ResourceName]string{
				"cpu": fmt.Sprint(8 * (i + 1)), "memory": fmt.Sprintf("%dGi", 32*(i+1)), "pods": "1100",
			}, map[corev1.ResourceName]string{"cpu": "2", "memory": "4Gi", "pods": "40"})
		if i == numClusters-1 {
			w.Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule)
		}
		clusters[i] = w.Obj()
	}
	return clusters
}

// benchSchedule schedules 10,000 bindings (1 to 100 replicas, each with a
// previous result on one cluster), cycling through placements, and
// reports bindings per second.
func benchSchedule(b *testing.B, clusters []*clusterv1alpha1.Cluster, placements []*policyv1alpha1.Placement) {
	const numBindings = 10000
	numClusters := len(clusters)
	specs := make([]workv1alpha2.ResourceBindingSpec, numBindings)
	for i := range specs {
		rb := utiltesting.MakeBinding(fmt.Sprintf("app-%d-deployment", i), fmt.Sprintf("ns-%d", i%50)).
			Resource("apps/v1", "Deployment", fmt.Sprintf("app-%d", i)).
			ResourceUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))).
			Replicas(int32(1+i%100)).
			Placement(placements[i%len(placements)]).
			ResourceRequest(map[corev1.ResourceName]string{"cpu": "100m", "memory": "128Mi"}).
			TargetCluster(clusters[i%numClusters].Name, 1).Obj()
		specs[i] = rb.Spec
	}
	fw, err := framework.New(plugins.NewInTreeRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for i := range specs {
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &specs[i]}, clusters)
			if _, err := fw.Schedule(ctx, sc); err != nil {
				b.Fatalf("binding %d: %v", i, err)
			}
		}
	}
	b.ReportMetric(float64(numBindings)*float64(b.N)/b.Elapsed().Seconds(), "bindings/s")
}
