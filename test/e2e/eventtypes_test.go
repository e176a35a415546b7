package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/util/events"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestWarningEventsOnly: with --event-types=Warning a template propagates
// as before, its success events are not written (they count as
// suppressed), and a failure is still recorded as a Warning.
func TestWarningEventsOnly(t *testing.T) {
	t.Parallel()
	metricsAddr := framework.FreeLoopbackAddr(t)
	cp := framework.StartControlPlane(t, framework.Options{Members: 1,
		Args: []string{"--member-args=--api-only", "--event-types=Warning", "--metrics-bind-address=" + metricsAddr}})
	ctx := framework.Context(t, 3*time.Minute)
	c := cp.Client(t)
	member := cp.MemberClientset(t, "member1")

	const ns = "warnings-only"
	framework.Create(t, c, utiltesting.MakeNamespace(ns).Obj(),
		framework.Deployment("web", ns).Replicas(2).Obj(),
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "web").Obj(),
		// Placed on a cluster that does not exist: ScheduleBindingFailed,
		// a Warning.
		framework.Deployment("nowhere", ns).Replicas(1).Obj(),
		utiltesting.MakePropagationPolicy("nowhere", ns).ClusterNames("no-such-cluster").Select("apps/v1", "Deployment", "nowhere").Obj())
	framework.Eventually(t, 2*time.Minute, "Deployment web in member1", func() (bool, string) {
		_, err := member.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	framework.Eventually(t, time.Minute, "ScheduleBindingFailed on nowhere", func() (bool, string) {
		have, err := framework.EventReasons(ctx, c, ns, "nowhere")
		if err != nil {
			return false, err.Error()
		}
		_, ok := have[events.ScheduleBindingFailed]
		return ok, fmt.Sprint("have ", have)
	})
	// web's ApplyPolicySucceed, GetReplicasSucceed and the pairs of
	// ScheduleBindingSucceed and SyncWorkSucceed at least, and nowhere's
	// ApplyPolicySucceed: suppressed when recorded, so never written.
	framework.Eventually(t, time.Minute, "success events suppressed", func() (bool, string) {
		n := framework.ScrapeMetrics(t, metricsAddr).Sum("atoll_events_total", `result="suppressed"`)
		return n >= 7, fmt.Sprint(n, " suppressed")
	})
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Type != corev1.EventTypeWarning {
			t.Errorf("%s event %s written on %s", e.Type, e.Reason, e.InvolvedObject.Name)
		}
	}
}
