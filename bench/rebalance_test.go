package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/sim/world"
	"github.com/atoll-dev/atoll/test/framework"
)

// Workload of BenchmarkRebalance.
const (
	rblReplicas  = 6 // per workload: 3:3, then 1:3 (2:4)
	rblNamespace = "rebalance"
	// rblLoadMilli of CPU per workload at a 50% target over 100m requests
	// is a demand of 6 pods.
	rblLoadMilli = 300
	// rblWindow is each HPA's scale-down stabilization window.
	rblWindow = 15
)

var rblMembers = []string{"member1", "member2"}

// rblMemberArgs give each member room for 500 workloads at their peak
// there (member2 runs 4 replicas of each at the end and 5 while a step
// surges): 10 nodes × 250 pods, and 10 × 32 cores for 2,500 × 100m.
const rblMemberArgs = "--member-args=--nodes=10,--max-pods=250,--node-cpu=32"

// rblWorkloads is the number of HPA workloads, 500 unless
// ATOLL_BENCH_REBALANCE_WORKLOADS says otherwise (a smaller run fits a
// busy machine).
func rblWorkloads(b *testing.B) int {
	if v := os.Getenv("ATOLL_BENCH_REBALANCE_WORKLOADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("ATOLL_BENCH_REBALANCE_WORKLOADS=%q: want a positive integer", v)
		}
		return n
	}
	return 500
}

// BenchmarkRebalance moves many HPA workloads between two simulated
// members: N Deployments (6 replicas, 100m CPU requests) each with an HPA
// (2..12, 50% CPU, 15s scale-down window) under 300m of constant load (6
// pods of demand), propagated by one policy at 1:1, so 3:3 each; then the
// policy's weights become 1:3 (2:4 each) and every workload moves through a
// Rebalance. One iteration is the whole scenario.
//
// Reported:
//   - move-s: weight change → every Rebalance Completed;
//   - analytic-min-s: the minimum, steps per workload × (pod ready,
//     about 1s in the simulator, + the 15s scale-down window); the source
//     caps are applied by the HPA at its next sync without waiting for the
//     window, so a move can beat it;
//   - rebalance-writes/workload-step: the writes the move itself makes
//     (Rebalance create and status, binding patches by the rebalance
//     controller and the scheduler's hand-over) ÷ (workloads × steps);
//   - cp-writes/workload-step: control-plane create/update/patch/delete
//     requests during the move (all components; events and Lease
//     heartbeats excluded) ÷
//     (workloads × steps);
//   - MB-peak-control-plane-rss: VmRSS peak of the control-plane process
//     (etcd, kube-apiserver and controllers) during the move;
//   - floor-violations: samples (every 2s) in which a workload had fewer
//     available pods over both members than its demand of 6.
func BenchmarkRebalance(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runRebalanceScenario(b)
	}
}

func runRebalanceScenario(b *testing.B) {
	n := rblWorkloads(b)
	cp := framework.StartControlPlane(b, framework.Options{Members: 2, Args: []string{rblMemberArgs,
		"--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s"}})
	ctx := framework.Context(b, 45*time.Minute)
	c := cp.Client(b)
	admin := kubernetes.NewForConfigOrDie(cp.RESTConfig(b))
	pp := rblPolicy(1, 1)
	members := settleHPAWorkloads(ctx, b, cp, c, pp, n)

	before, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	var peakMB float64
	var violations, samples int
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if rss, err := residentMB(cp.ControlPlanePID()); err == nil {
				mu.Lock()
				peakMB = max(peakMB, rss)
				mu.Unlock()
			}
			if avail, err := rblAvailable(ctx, members); err == nil {
				mu.Lock()
				samples++
				for i := range n {
					name := templateName(i)
					if avail["member1"][name]+avail["member2"][name] < rblReplicas {
						violations++
					}
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
		}
	}()

	start := time.Now()
	framework.Update(b, c, pp, func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Placement = rblPolicy(1, 3).Spec.Placement })
	var steps int
	framework.Eventually(b, 30*time.Minute, "every Rebalance Completed", func() (bool, string) {
		var list appsv1alpha1.RebalanceList
		if err := c.List(ctx, &list, client.InNamespace(rblNamespace)); err != nil {
			return false, err.Error()
		}
		phases := map[appsv1alpha1.RebalancePhase]int{}
		steps = 0
		for _, rb := range list.Items {
			phases[rb.Status.Phase]++
			steps += int(rb.Status.Step)
		}
		return phases[appsv1alpha1.PhaseCompleted] == n, fmt.Sprintf("%d Rebalances: %v", len(list.Items), phases)
	})
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	after, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	delta := after.minus(before)
	writes := delta.sum(func(k requestKey) bool {
		return isCountedWrite(k) && k.resource != "events"
	})
	// The move's own writes: Rebalances, and binding spec patches (the
	// detector's two placement updates per workload, Deployment and HPA
	// binding, are the policy edit's, not the move's).
	moveWrites := delta.sum(func(k requestKey) bool {
		return isCountedWrite(k) && (k.resource == "rebalances" || (k.resource == "resourcebindings" && k.subresource == ""))
	}) - 2*float64(n)
	var breakdown []string
	for k, v := range delta {
		if isCountedWrite(k) && v >= float64(n)/10 {
			breakdown = append(breakdown, fmt.Sprintf("%s %s/%s %s: %.0f", k.verb, k.resource, k.subresource, k.component, v))
		}
	}
	sort.Strings(breakdown)
	b.Logf("control-plane writes during the move (>= N/10):\n  %s", strings.Join(breakdown, "\n  "))

	perStep := float64(steps) / float64(n)
	analytic := perStep * (1 + rblWindow) // the minimum: pod ready (≈1s in the simulator) + the scale-down window
	b.ReportMetric(elapsed.Seconds(), "move-s")
	b.ReportMetric(analytic, "analytic-min-s")
	b.ReportMetric(writes/float64(max(steps, 1)), "cp-writes/workload-step")
	b.ReportMetric(moveWrites/float64(max(steps, 1)), "rebalance-writes/workload-step")
	b.ReportMetric(peakMB, "MB-peak-control-plane-rss")
	b.ReportMetric(float64(violations), "floor-violations")
	b.Logf("%d workloads, %d steps in all, %d samples, %.0f control-plane writes", n, steps, samples, writes)
}

// rblAvailable is each member's available replicas per Deployment.
// settleHPAWorkloads creates the namespace, policy pp and n Deployments with
// HPAs under rblLoadMilli of load each, and waits until every workload runs
// 3:3 available; it returns clients of the members.
func settleHPAWorkloads(ctx context.Context, b *testing.B, cp *framework.ControlPlane, c client.Client,
	pp *policyv1alpha1.PropagationPolicy, n int) map[string]kubernetes.Interface {
	waitClustersReady(ctx, b, c, len(rblMembers))
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rblNamespace}}); err != nil {
		b.Fatal(err)
	}
	createPolicy(ctx, b, c, pp)
	for i := range n {
		if err := world.SetLoad(cp.DataDir, templateName(i), rblLoadMilli); err != nil {
			b.Fatal(err)
		}
	}
	createInParallel(ctx, b, cp.RESTConfig(b), n, func(cs kubernetes.Interface, i int) error {
		if _, err := cs.AppsV1().Deployments(rblNamespace).Create(ctx, rblDeployment(templateName(i)), metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(rblNamespace).Create(ctx, rblHPA(templateName(i)), metav1.CreateOptions{})
		return err
	})
	members := map[string]kubernetes.Interface{}
	for _, m := range rblMembers {
		members[m] = kubernetes.NewForConfigOrDie(cp.MemberConfig(b, m))
	}
	framework.Eventually(b, 20*time.Minute, "every workload 3:3 available", func() (bool, string) {
		avail, err := rblAvailable(ctx, members)
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for i := range n {
			if avail["member1"][templateName(i)] == 3 && avail["member2"][templateName(i)] == 3 {
				done++
			}
		}
		return done == n, fmt.Sprintf("%d of %d at 3:3", done, n)
	})
	return members
}

func rblAvailable(ctx context.Context, members map[string]kubernetes.Interface) (map[string]map[string]int32, error) {
	out := map[string]map[string]int32{}
	for m, cs := range members {
		list, err := cs.AppsV1().Deployments(rblNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out[m] = map[string]int32{}
		for _, d := range list.Items {
			out[m][d.Name] = d.Status.AvailableReplicas
		}
	}
	return out, nil
}

func rblPolicy(w1, w2 int64) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: rblNamespace},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment"}, {APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: rblMembers},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: w1},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: w2},
					}},
				},
			},
		},
	}
}

func rblDeployment(name string) *appsv1.Deployment {
	d := benchDeployment(rblNamespace, name, rblReplicas)
	d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("100m")
	return d
}

func rblHPA(name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rblNamespace},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    12,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
			}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](rblWindow)},
			},
		},
	}
}
