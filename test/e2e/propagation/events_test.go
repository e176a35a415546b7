package propagation

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestKarmadaEvents: the events Karmada records on a template and its
// binding as it propagates, under Karmada's reasons, so that tools (and
// Karmada's own e2e specs) that look for them find them.
func TestKarmadaEvents(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "karmada-events"
	framework.CreateNamespace(t, c, ns)
	overrider := policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
		{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": "edge"}}}}
	framework.Create(t, c,
		utiltesting.MakeDeployment("web", ns).Replicas(2).Obj(),
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames(members...).Select("apps/v1", "Deployment", "web").Obj(),
		utiltesting.MakeOverridePolicy("web", ns).Select("apps/v1", "Deployment", "web").
			Rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{members[0]}}, overrider).Obj(),
		// A ClusterIP Service has no status to aggregate; its aggregation
		// still counts (Karmada's BasicCase Service spec waits for it).
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: ns},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "web"}}},
		utiltesting.MakePropagationPolicy("svc", ns).ClusterNames(members...).Select("v1", "Service", "svc").Obj(),
		// Placed on a cluster that does not exist: unschedulable.
		utiltesting.MakeDeployment("nowhere", ns).Replicas(1).Obj(),
		utiltesting.MakePropagationPolicy("nowhere", ns).ClusterNames("no-such-cluster").Select("apps/v1", "Deployment", "nowhere").Obj(),
	)

	want := map[string][]string{
		"web": {events.ApplyPolicySucceed, events.GetReplicasSucceed, events.ScheduleBindingSucceed, events.ApplyOverridePolicySucceed,
			events.SyncWorkSucceed, events.AggregateStatusSucceed},
		names.BindingName("Deployment", "web"): {events.ScheduleBindingSucceed, events.SyncWorkSucceed, events.AggregateStatusSucceed},
		"svc":                                  {events.ApplyPolicySucceed, events.ScheduleBindingSucceed, events.SyncWorkSucceed, events.AggregateStatusSucceed},
		names.BindingName("Service", "svc"):    {events.ScheduleBindingSucceed, events.SyncWorkSucceed, events.AggregateStatusSucceed},
		"nowhere":                              {events.ApplyPolicySucceed, events.ScheduleBindingFailed},
		names.BindingName("Deployment", "nowhere"): {events.ScheduleBindingFailed},
	}
	for object, reasons := range want {
		framework.Eventually(t, 90*time.Second, "events "+strings.Join(reasons, ", ")+" on "+object, func() (bool, string) {
			have, err := framework.EventReasons(ctx, c, ns, object)
			if err != nil {
				return false, err.Error()
			}
			for _, r := range reasons {
				if _, ok := have[r]; !ok {
					return false, "missing " + r + "; have " + strings.Join(slices.Sorted(maps.Keys(have)), ", ")
				}
			}
			return true, ""
		})
	}
	// What Karmada records as events on each cluster's Work
	// (SyncWorkloadSucceed, ReflectStatusSucceed, InterpretHealthSucceed)
	// atoll records per cluster in the binding's aggregatedStatus.
	for _, b := range []string{names.BindingName("Deployment", "web"), names.BindingName("Service", "svc")} {
		framework.Eventually(t, time.Minute, "every cluster applied, reflected and healthy in "+b, func() (bool, string) {
			rb, err := framework.GetBinding(ctx, c, ns, b)
			if err != nil {
				return false, err.Error()
			}
			for _, m := range members {
				item := framework.AggregatedStatusOf(rb, m)
				if item == nil || !item.Applied || item.Health != workv1alpha2.ResourceHealthy {
					return false, fmt.Sprintf("%s: %+v", m, item)
				}
				if strings.HasPrefix(b, "web") && item.Status == nil {
					return false, m + ": no reflected status"
				}
			}
			return true, ""
		})
	}
	// An update reaches every member (the BasicCase specs' last step).
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "svc"}, svc); err != nil {
		t.Fatal(err)
	}
	framework.Update(t, c, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port = 8080 })
	for _, m := range members {
		framework.Eventually(t, time.Minute, "port 8080 in "+m, func() (bool, string) {
			got, err := world.MemberClientset(t, m).CoreV1().Services(ns).Get(ctx, "svc", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return got.Spec.Ports[0].Port == 8080, fmt.Sprint("port ", got.Spec.Ports[0].Port)
		})
	}
	have, _ := framework.EventReasons(ctx, c, ns, "web")
	if msg := have[events.ApplyOverridePolicySucceed]; !strings.Contains(msg, "override policy("+ns+"/web) for cluster("+members[0]+")") {
		t.Errorf("ApplyOverridePolicySucceed says %q", msg)
	}
	if msg := have[events.ApplyPolicySucceed]; msg != "Apply policy("+ns+"/web) succeed" {
		t.Errorf("ApplyPolicySucceed says %q", msg)
	}
}
