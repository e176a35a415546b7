package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

func newNamespace(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(ctx, utiltesting.MakeNamespace(name).Obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// TestDeploymentRunsAndSurplusStaysPending: a member runs a Deployment's
// pods to Ready, and a Deployment larger than its capacity leaves the
// surplus Pending (the real scheduler respects node capacity).
func TestDeploymentRunsAndSurplusStaysPending(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	cs := world.MemberClientset(t, "member1")
	newNamespace(t, ctx, cs, "capacity")

	if _, err := cs.AppsV1().Deployments("capacity").Create(ctx, framework.Deployment("small", "capacity").Replicas(2).Request(corev1.ResourceCPU, "100m").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 90*time.Second, "2 Ready pods of small", func() (bool, string) {
		ready, _, err := framework.PodCounts(ctx, cs, "capacity", "small")
		return err == nil && ready == 2, fmt.Sprintf("ready=%d err=%v", ready, err)
	})

	// Nodes have 8 CPU each (3 nodes): a 5-CPU pod fits once per node.
	if _, err := cs.AppsV1().Deployments("capacity").Create(ctx, framework.Deployment("big", "capacity").Replicas(5).Request(corev1.ResourceCPU, "5").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 90*time.Second, "3 Ready and 2 unschedulable pods of big", func() (bool, string) {
		ready, pending, err := framework.PodCounts(ctx, cs, "capacity", "big")
		return err == nil && ready == 3 && pending == 2, fmt.Sprintf("ready=%d unschedulable=%d err=%v", ready, pending, err)
	})
}

// hpaReplicas reads the HPA's current and desired replicas.
func hpaReplicas(ctx context.Context, cs kubernetes.Interface, ns, name string) (int32, int32, error) {
	h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, 0, err
	}
	return h.Status.CurrentReplicas, h.Status.DesiredReplicas, nil
}

// TestHPAScalesWithWorldLoad: 600m of load on app web, pods requesting 200m
// with a 50% target, settles at 6 replicas; kubectl top shows the usage;
// without load the HPA scales back down after its stabilization window.
func TestHPAScalesWithWorldLoad(t *testing.T) {
	ctx := framework.Context(t, 5*time.Minute)
	cs := world.MemberClientset(t, "member1")
	newNamespace(t, ctx, cs, "hpa")
	if _, err := cs.AppsV1().Deployments("hpa").Create(ctx, framework.Deployment("web", "hpa").Replicas(1).Request(corev1.ResourceCPU, "200m").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("hpa").Create(ctx, framework.HPA("web", "hpa", 10), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	world.Load(t, "web", "600m")
	t.Cleanup(func() { world.Load(t, "web", "0") })

	framework.Eventually(t, 3*time.Minute, "HPA at 6±1 replicas with all pods Ready", func() (bool, string) {
		cur, desired, err := hpaReplicas(ctx, cs, "hpa", "web")
		ready, _, _ := framework.PodCounts(ctx, cs, "hpa", "web")
		ok := err == nil && desired >= 5 && desired <= 7 && cur == desired && int32(ready) == desired
		return ok, fmt.Sprintf("current=%d desired=%d ready=%d err=%v", cur, desired, ready, err)
	})

	// metrics.k8s.io through the member's API server, as kubectl top reads it.
	mc := metricsclient.NewForConfigOrDie(world.MemberConfig(t, "member1"))
	pm, err := mc.MetricsV1beta1().PodMetricses("hpa").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("listing pod metrics: %v", err)
	}
	var total int64
	for _, p := range pm.Items {
		for _, c := range p.Containers {
			total += c.Usage.Cpu().MilliValue()
		}
	}
	if total < 500 || total > 700 {
		t.Errorf("pods of web use %dm CPU in total, want about the 600m offered", total)
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--kubeconfig", world.DataDir+"/members/member1/kubeconfig", "top", "pods", "-n", "hpa").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "web-") {
			t.Errorf("kubectl top pods: %v\n%s", err, out)
		}
	}

	world.Load(t, "web", "0")
	framework.Eventually(t, 2*time.Minute, "HPA back at 1 replica", func() (bool, string) {
		cur, desired, err := hpaReplicas(ctx, cs, "hpa", "web")
		return err == nil && desired == 1 && cur == 1, fmt.Sprintf("current=%d desired=%d err=%v", cur, desired, err)
	})
}

// TestStoppedMemberLoadMovesToTheOther: one app in two members under one
// load; stopping member1 sends all traffic to member2, whose HPA scales up
// to carry it; starting member1 spreads the load again.
func TestStoppedMemberLoadMovesToTheOther(t *testing.T) {
	ctx := framework.Context(t, 8*time.Minute)
	m1, m2 := world.MemberClientset(t, "member1"), world.MemberClientset(t, "member2")
	for _, cs := range []kubernetes.Interface{m1, m2} {
		newNamespace(t, ctx, cs, "shop")
		if _, err := cs.AppsV1().Deployments("shop").Create(ctx, framework.Deployment("shop", "shop").Replicas(2).Request(corev1.ResourceCPU, "200m").Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("shop").Create(ctx, framework.HPA("shop", "shop", 12), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// 800m over two members: 4 pods each at 100m (50% of 200m).
	world.Load(t, "shop", "800m")
	t.Cleanup(func() { world.Load(t, "shop", "0") })
	framework.Eventually(t, 3*time.Minute, "both HPAs at 4±1", func() (bool, string) {
		_, d1, err1 := hpaReplicas(ctx, m1, "shop", "shop")
		_, d2, err2 := hpaReplicas(ctx, m2, "shop", "shop")
		return err1 == nil && err2 == nil && d1 >= 3 && d1 <= 5 && d2 >= 3 && d2 <= 5, fmt.Sprintf("member1=%d member2=%d", d1, d2)
	})

	start := world.InjectFault(t, "member1", "stop", "start")
	framework.Eventually(t, 3*time.Minute, "member2's HPA carries the whole load (8±1)", func() (bool, string) {
		_, d2, err := hpaReplicas(ctx, m2, "shop", "shop")
		ready, _, _ := framework.PodCounts(ctx, m2, "shop", "shop")
		return err == nil && d2 >= 7 && d2 <= 9 && int32(ready) == d2, fmt.Sprintf("member2 desired=%d ready=%d err=%v", d2, ready, err)
	})

	start()
	// member1's pods kept running through its restart; they get traffic again.
	mc := metricsclient.NewForConfigOrDie(world.MemberConfig(t, "member1"))
	framework.Eventually(t, 2*time.Minute, "member1's pods serve traffic again", func() (bool, string) {
		pm, err := mc.MetricsV1beta1().PodMetricses("shop").List(ctx, metav1.ListOptions{LabelSelector: "app=shop"})
		if err != nil {
			return false, err.Error()
		}
		var used int64
		for _, p := range pm.Items {
			for _, c := range p.Containers {
				used += c.Usage.Cpu().MilliValue()
			}
		}
		return used > 0, fmt.Sprintf("member1 pods use %dm", used)
	})
}

// TestPartitionCutsTheProxyOnly: a partitioned member keeps running and is
// reachable through its own kubeconfig, but not through the proxy the
// control plane uses; heal restores the proxy.
func TestPartitionCutsTheProxyOnly(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	probe := func(cfg *rest.Config) error {
		cfg = rest.CopyConfig(cfg)
		cfg.Timeout = 2 * time.Second
		_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err
	}
	direct, proxied := world.MemberConfig(t, "member2"), world.MemberProxyConfig(t, "member2")
	if err := probe(proxied); err != nil {
		t.Fatalf("proxy before partition: %v", err)
	}

	heal := world.InjectFault(t, "member2", "partition", "heal")
	if err := probe(proxied); err == nil {
		t.Errorf("partitioned member answered through the proxy")
	}
	if err := probe(direct); err != nil {
		t.Errorf("partitioned member unreachable through its own kubeconfig: %v", err)
	}

	heal()
	if err := probe(proxied); err != nil {
		t.Errorf("proxy after heal: %v", err)
	}
}

// TestSlowAddsLatencyThroughTheProxy: `slow` delays requests that go
// through the proxy by at least the configured latency; `fast` is applied.
func TestSlowAddsLatencyThroughTheProxy(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	cs := kubernetes.NewForConfigOrDie(world.MemberProxyConfig(t, "member2"))
	timed := func() time.Duration {
		start := time.Now()
		if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Fatalf("get through proxy: %v", err)
		}
		return time.Since(start)
	}
	timed() // warm the connection

	fast := world.InjectFault(t, "member2", "slow --latency 700ms", "fast")
	if d := timed(); d < 700*time.Millisecond {
		t.Errorf("request through a slow proxy took %v, want at least 700ms", d)
	}
	// fast waits until the member applied it; an upper bound on request time
	// would only measure how busy the machine is.
	fast()
	timed()
}
