package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestAPIOnlyMember: `atoll up --member-args=--api-only` runs members that
// are only API servers (the benchmarks' members, issue 14): they join, are
// Ready, and receive propagated objects, but have no nodes and make no
// pods, since no controller acts on what they store. The controllers'
// cost metrics (docs/metrics.md) count what the propagation took.
func TestAPIOnlyMember(t *testing.T) {
	t.Parallel()
	metricsAddr := framework.FreeLoopbackAddr(t)
	cp := framework.StartControlPlane(t, framework.Options{Members: 1,
		Args: []string{"--member-args=--api-only", "--metrics-bind-address=" + metricsAddr}})
	ctx := framework.Context(t, 3*time.Minute)
	c := cp.Client(t)
	member := cp.MemberClientset(t, "member1")

	const ns = "apionly"
	framework.Create(t, c, utiltesting.MakeNamespace(ns).Obj(),
		framework.Deployment("web", ns).Replicas(2).Obj(),
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "web").Obj())
	framework.Eventually(t, 2*time.Minute, "Deployment web in member1", func() (bool, string) {
		d, err := member.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return *d.Spec.Replicas == 2, fmt.Sprintf("replicas %d", *d.Spec.Replicas)
	})

	// Nothing acts on it: no ReplicaSet, no pod, no node.
	time.Sleep(3 * time.Second)
	rs, err := member.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := member.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := member.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Items) != 0 || len(pods.Items) != 0 || len(nodes.Items) != 0 {
		t.Errorf("api-only member acted on its objects: %d ReplicaSets, %d pods, %d nodes; want none", len(rs.Items), len(pods.Items), len(nodes.Items))
	}

	metrics := framework.ScrapeMetrics(t, metricsAddr)
	for _, want := range []string{
		`atoll_controller_requests_total{code="2xx",controller="detector",verb="create"}`,
		`atoll_controller_requests_total{code="2xx",controller="scheduler",verb="patch"}`,
		`atoll_executor_binding_status_writes_total{kind="resourcebinding",result="written"}`,
		`atoll_executor_member_apply_duration_seconds_count{cluster="member1",outcome="ok"}`,
		`workqueue_depth{controller="executor-resourcebinding"`,
		`workqueue_queue_duration_seconds_count{controller="detector"`,
	} {
		if !metrics.Has(want) {
			t.Errorf("controller metrics lack %s", want)
		}
	}
}
