package propagation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestNamespaceDeletion: deleting a namespace in the control plane deletes
// its templates, policies and bindings (the control plane runs the
// namespace controller, as Karmada's does), so it does not stay
// Terminating; the workloads it propagated are withdrawn from the members.
// Objects of the member's own in the member namespace stay.
func TestNamespaceDeletion(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "doomed"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c, utiltesting.MakeDeployment("web", ns).Replicas(1).Obj(),
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames(members...).Select("apps/v1", "Deployment", "web").Obj())
	for _, m := range members {
		framework.Eventually(t, time.Minute, m+" runs doomed/web", func() (bool, string) {
			_, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil, errString(err)
		})
	}
	// The member's own object next to atoll's.
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := world.MemberClientset(t, members[0]).CoreV1().ConfigMaps(ns).Create(ctx, own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 90*time.Second, "namespace doomed gone from the control plane", func() (bool, string) {
		var n corev1.Namespace
		err := c.Get(ctx, client.ObjectKey{Name: ns}, &n)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, string(n.Status.Phase) + " " + errString(err)
	})
	for _, m := range members {
		framework.Eventually(t, time.Minute, m+": doomed/web withdrawn", func() (bool, string) {
			_, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err), errString(err)
		})
	}
	if _, err := world.MemberClientset(t, members[0]).CoreV1().ConfigMaps(ns).Get(ctx, "local", metav1.GetOptions{}); err != nil {
		t.Errorf("the member's own ConfigMap in the namespace is gone: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
