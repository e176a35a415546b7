package propagation

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestServiceAndBudgetStatus: a LoadBalancer Service's template shows the
// ingress points of every member; a PodDisruptionBudget's template shows
// the members' budgets added up.
func TestServiceAndBudgetStatus(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "status"
	framework.CreateNamespace(t, c, ns)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	framework.Create(t, c, utiltesting.MakeDeployment("web", ns).Replicas(2).Obj(), svc, pdb,
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames(members...).
			Select("apps/v1", "Deployment", "web").Select("v1", "Service", "web").Select("policy/v1", "PodDisruptionBudget", "web").Obj())

	// No cloud load balancer in the simulator: each member's gets an
	// address the way a cloud controller would give it one.
	for i, m := range members {
		cs := world.MemberClientset(t, m)
		framework.Eventually(t, time.Minute, m+" has the Service with an address", func() (bool, string) {
			s, err := cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("192.0.2.%d", i+1)}}
			_, err = cs.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{})
			return err == nil, errString(err)
		})
	}
	framework.Eventually(t, time.Minute, "the template Service lists both members' addresses", func() (bool, string) {
		var s corev1.Service
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &s); err != nil {
			return false, err.Error()
		}
		ips := map[string]bool{}
		for _, in := range s.Status.LoadBalancer.Ingress {
			ips[in.IP] = true
		}
		return len(ips) == 2 && ips["192.0.2.1"] && ips["192.0.2.2"], fmt.Sprint(s.Status.LoadBalancer.Ingress)
	})
	framework.Eventually(t, 2*time.Minute, "the template budget adds up the members'", func() (bool, string) {
		var p policyv1.PodDisruptionBudget
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &p); err != nil {
			return false, err.Error()
		}
		st := p.Status
		var want int32
		for _, m := range members {
			mp, err := world.MemberClientset(t, m).PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			want += mp.Status.ExpectedPods
		}
		return want > 0 && st.ExpectedPods == want && st.CurrentHealthy == want,
			fmt.Sprintf("template expected=%d healthy=%d desired=%d allowed=%d; members expect %d", st.ExpectedPods, st.CurrentHealthy, st.DesiredHealthy, st.DisruptionsAllowed, want)
	})
}
