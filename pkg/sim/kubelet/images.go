package kubelet

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unpullableImage reports the first container image of pod that no
// registry could serve, by the simulator's rule: the image's repository
// starts with "fake/" (as Karmada's e2e suite writes an image that does not
// exist, "fake/nginx:1.19.0"), or its registry host ends in ".invalid" (a
// name that never resolves, RFC 6761). Every other image pulls.
func unpullableImage(pod *corev1.Pod) (string, bool) {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if imageUnpullable(c.Image) {
			return c.Image, true
		}
	}
	return "", false
}

func imageUnpullable(image string) bool {
	first, rest, hasRest := strings.Cut(image, "/")
	if !hasRest {
		return false // "nginx:1.27": Docker Hub's library
	}
	if strings.ContainsAny(first, ".:") || first == "localhost" {
		// A registry host: judge the host, then the repository after it.
		host, _, _ := strings.Cut(first, ":")
		if strings.HasSuffix(host, ".invalid") {
			return true
		}
		first, _, _ = strings.Cut(rest, "/")
	}
	return first == "fake"
}

// failPull reports pod Pending with its containers waiting in
// ImagePullBackOff, as a kubelet does once a pull has failed, so that
// health checks (and application failover) see an unhealthy workload.
func (k *Kubelet) failPull(ctx context.Context, pod *corev1.Pod, image string, now time.Time) error {
	msg := `Back-off pulling image "` + image + `": ErrImagePull: pull access denied or repository does not exist (simulated: see docs/simulator-world.md)`
	if len(pod.Status.ContainerStatuses) > 0 && pod.Status.ContainerStatuses[0].State.Waiting != nil &&
		pod.Status.ContainerStatuses[0].State.Waiting.Message == msg {
		return nil // reported already
	}
	t := metav1.NewTime(now)
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodPending
	pod.Status.HostIP = nodeIP(k.nodeIndex(pod.Spec.NodeName))
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	pod.Status.StartTime = &t
	pod.Status.QOSClass = qosClass(pod)
	setCondition(&pod.Status, corev1.PodScheduled, t)
	setCondition(&pod.Status, corev1.PodInitialized, t)
	for _, c := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setFalse(&pod.Status, c, "ContainersNotReady", "containers with unready status: ["+containerNames(pod)+"]", t)
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: false, Started: new(false)}
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: msg}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
	}
	_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func containerNames(pod *corev1.Pod) string {
	names := make([]string, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		names[i] = c.Name
	}
	return strings.Join(names, " ")
}

func setFalse(st *corev1.PodStatus, t corev1.PodConditionType, reason, message string, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != corev1.ConditionFalse {
				st.Conditions[i].LastTransitionTime = now
			}
			st.Conditions[i].Status, st.Conditions[i].Reason, st.Conditions[i].Message = corev1.ConditionFalse, reason, message
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: message, LastTransitionTime: now})
}

// finishJobPod ends a running pod a Job owns once it has run for
// JobPodRunTime: its containers exit 0 and the pod Succeeds, so the Job
// controller counts a completion. Other pods run on.
func (k *Kubelet) finishJobPod(ctx context.Context, pod *corev1.Pod, now time.Time) (time.Duration, error) {
	if k.opts.JobPodRunTime <= 0 || !ownedByJob(pod) || pod.Status.StartTime == nil {
		return 0, nil
	}
	if wait := pod.Status.StartTime.Add(k.opts.JobPodRunTime).Sub(now); wait > 0 {
		return wait, nil
	}
	t := metav1.NewTime(now)
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodSucceeded
	for _, c := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setFalse(&pod.Status, c, "PodCompleted", "", t)
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		started := pod.Status.StartTime.Time
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt.Time
		}
		cs.Ready, cs.Started = false, new(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: metav1.NewTime(started), FinishedAt: t, ContainerID: cs.ContainerID}}
	}
	_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}

func ownedByJob(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Job" && strings.HasPrefix(o.APIVersion, "batch/") {
			return true
		}
	}
	return false
}
