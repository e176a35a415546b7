package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestImageUnpullable(t *testing.T) {
	cases := map[string]bool{
		"nginx:1.27":                         false,
		"library/nginx":                      false,
		"registry.k8s.io/pause:3.10":         false,
		"fake/nginx:1.19.0":                  true, // Karmada's e2e image that does not exist
		"docker.io/fake/nginx":               true,
		"localhost:5000/fake/app":            true,
		"registry.invalid/team/app:v1":       true,
		"registry.invalid:5000/team/app:v1":  true,
		"fakery/nginx":                       false,
		"ghcr.io/someone/fake":               false,
		"example.com/fake-not-a-path/image":  false,
		"my.registry.invalid.example.com/ok": false,
	}
	for image, want := range cases {
		if got := imageUnpullable(image); got != want {
			t.Errorf("imageUnpullable(%q) = %v, want %v", image, got, want)
		}
	}
}

// TestFailPullAndJobCompletion: a pod with an image that cannot exist stays
// Pending in ImagePullBackOff and not Ready; a Job's running pod succeeds
// once it has run JobPodRunTime.
func TestFailPullAndJobCompletion(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clk := clocktesting.NewFakeClock(now)
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: "m-0", Containers: []corev1.Container{{Name: "app", Image: "fake/nginx:1.19.0"}}}}
	started := metav1.NewTime(now)
	job := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-x", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: "u"}}},
		Spec: corev1.PodSpec{NodeName: "m-0", Containers: []corev1.Container{{Name: "pi", Image: "perl:5.34.0"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "pi", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}}
	cs := fake.NewSimpleClientset(pending, job)
	k := New(cs, Options{Nodes: NodeSpec{Prefix: "m", Count: 1}, JobPodRunTime: 5 * time.Second, Clock: clk})

	if err := k.failPull(ctx, pending, "fake/nginx:1.19.0", now); err != nil {
		t.Fatal(err)
	}
	got, _ := cs.CoreV1().Pods("ns").Get(ctx, "bad", metav1.GetOptions{})
	if got.Status.Phase != corev1.PodPending || got.Status.ContainerStatuses[0].State.Waiting == nil ||
		got.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
		t.Errorf("pull failure: phase %s, statuses %+v", got.Status.Phase, got.Status.ContainerStatuses)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionFalse {
			t.Errorf("Ready is %s, want False", c.Status)
		}
	}

	wait, err := k.finishJobPod(ctx, job, now.Add(2*time.Second))
	if err != nil || wait != 3*time.Second {
		t.Fatalf("before its run time: wait %v, err %v; want 3s", wait, err)
	}
	if _, err := k.finishJobPod(ctx, job, now.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, _ = cs.CoreV1().Pods("ns").Get(ctx, "job-x", metav1.GetOptions{})
	if got.Status.Phase != corev1.PodSucceeded || got.Status.ContainerStatuses[0].State.Terminated == nil ||
		got.Status.ContainerStatuses[0].State.Terminated.ExitCode != 0 {
		t.Errorf("job pod: phase %s, statuses %+v", got.Status.Phase, got.Status.ContainerStatuses)
	}
}
