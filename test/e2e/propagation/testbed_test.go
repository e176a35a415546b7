package propagation

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestSimulatedKubeletRules: the test bed behaves as real members would for
// what Karmada's specs rely on. A Deployment whose image cannot exist is
// Unhealthy in every member (its pods wait in ImagePullBackOff), and a Job
// runs to completion, its success aggregated onto the template.
func TestSimulatedKubeletRules(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "testbed"
	framework.CreateNamespace(t, c, ns)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "pi", Image: "perl:5.34.0", Command: []string{"perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"}}},
			}},
		},
	}
	framework.Create(t, c,
		utiltesting.MakeDeployment("broken", ns).Replicas(1).Image("fake/nginx:1.19.0").Obj(),
		utiltesting.MakePropagationPolicy("broken", ns).ClusterNames(members...).Select("apps/v1", "Deployment", "broken").Obj(),
		job,
		utiltesting.MakePropagationPolicy("pi", ns).ClusterNames(members[0]).Select("batch/v1", "Job", "pi").Obj(),
	)

	framework.Eventually(t, 90*time.Second, "broken is Unhealthy in every member", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "broken-deployment")
		if err != nil {
			return false, err.Error()
		}
		for _, m := range members {
			item := framework.AggregatedStatusOf(rb, m)
			if item == nil || item.Health != workv1alpha2.ResourceUnhealthy {
				return false, fmt.Sprintf("%s: %+v", m, item)
			}
		}
		return true, ""
	})
	// The binding turns Unhealthy as soon as the Deployment is
	// unavailable, which can be before the simulated kubelet has reported
	// the pull failure on a busy machine: wait for it.
	framework.Eventually(t, 90*time.Second, "broken's pods in ImagePullBackOff", func() (bool, string) {
		pods, err := world.MemberClientset(t, members[0]).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		seen := 0
		for _, p := range pods.Items {
			if p.Labels["app"] != "broken" {
				continue
			}
			seen++
			if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
				p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
				return false, fmt.Sprintf("pod %s: %+v", p.Name, p.Status.ContainerStatuses)
			}
		}
		return seen > 0, "no pod of broken yet"
	})

	framework.Eventually(t, 90*time.Second, "Job pi succeeded, as the template's status says", func() (bool, string) {
		var j batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pi"}, &j); err != nil {
			return false, err.Error()
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("status %+v", j.Status)
	})
}
