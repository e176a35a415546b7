package propagation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestPodPropagation: a Pod is a template like any other (the control
// plane admits it without a ServiceAccount and never runs it); it runs in
// the member it is placed on, and the template's phase follows.
func TestPodPropagation(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "solo"
	framework.CreateNamespace(t, c, ns)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "solo", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/solo:v1"}}}}
	framework.Create(t, c, pod, utiltesting.MakePropagationPolicy("solo", ns).ClusterNames(members[0]).Select("v1", "Pod", "solo").Obj())
	framework.Eventually(t, time.Minute, members[0]+" runs the pod", func() (bool, string) {
		p, err := world.MemberClientset(t, members[0]).CoreV1().Pods(ns).Get(ctx, "solo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	framework.Eventually(t, time.Minute, "the template pod's phase is Running", func() (bool, string) {
		var p corev1.Pod
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "solo"}, &p); err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	if _, err := world.MemberClientset(t, members[1]).CoreV1().Pods(ns).Get(ctx, "solo", metav1.GetOptions{}); err == nil {
		t.Errorf("the pod also runs in %s, outside its placement", members[1])
	}
}
