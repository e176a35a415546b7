package propagation

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestWhenNoClusterFits: two Deployments placed on member1 by its label.
// When the label changes so that no cluster matches, the one whose policy
// opts into Karmada's behaviour (atoll.dev/when-no-cluster-fits: Withdraw)
// leaves member1, and comes back with the label; the other keeps its
// placement (atoll's default).
func TestWhenNoClusterFits(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	const ns = "no-fit"
	framework.CreateNamespace(t, c, ns)
	setLabel := func(v string) {
		t.Helper()
		var cl clusterv1alpha1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, &cl); err != nil {
			t.Fatal(err)
		}
		framework.Update(t, c, &cl, func(cl *clusterv1alpha1.Cluster) {
			if v == "" {
				delete(cl.Labels, "e2e-no-fit")
				return
			}
			if cl.Labels == nil {
				cl.Labels = map[string]string{}
			}
			cl.Labels["e2e-no-fit"] = v
		})
	}
	setLabel("ok")
	t.Cleanup(func() { setLabel("") })
	policy := func(name, mode string) client.Object {
		pp := utiltesting.MakePropagationPolicy(name, ns).Select("apps/v1", "Deployment", name).
			Placement(&policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e-no-fit": "ok"}}}}).Obj()
		if mode != "" {
			pp.Annotations = map[string]string{policyv1alpha1.WhenNoClusterFitsAnnotation: mode}
		}
		return pp
	}
	framework.CreateAndCleanup(t, c,
		utiltesting.MakeDeployment("leaves", ns).Replicas(1).Obj(), policy("leaves", "Withdraw"),
		utiltesting.MakeDeployment("stays", ns).Replicas(1).Obj(), policy("stays", ""))
	in := func(name string) bool { return memberDeployment(ctx, t, "member1", ns, name) != nil }
	for _, name := range []string{"leaves", "stays"} {
		framework.Eventually(t, time.Minute, name+" in member1", func() (bool, string) { return in(name), "" })
	}

	setLabel("not-ok")
	framework.Eventually(t, time.Minute, "leaves is withdrawn from member1", func() (bool, string) { return !in("leaves"), "" })
	if !in("stays") {
		t.Fatal("stays left member1 although its policy keeps the placement")
	}
	if memberDeployment(ctx, t, "member2", ns, "leaves") != nil {
		t.Fatal("leaves went to member2, which never matched")
	}

	setLabel("ok")
	framework.Eventually(t, time.Minute, "leaves is back in member1", func() (bool, string) { return in("leaves"), "" })
}
