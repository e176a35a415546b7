package world

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// AppLabel names the application of a pod: pods labelled app=NAME share
	// the load of NAME.
	AppLabel = "app"
	// CPURequestHeadroom caps the CPU of a pod whose containers do not all
	// have CPU limits at this multiple of its CPU requests (see CapCPU).
	CPURequestHeadroom = 4
	// DefaultContainerMemory is the memory a container uses when it has
	// neither a memory request nor a memory limit.
	DefaultContainerMemory = 32 << 20 // 32Mi
)

// ServesTraffic reports whether pod gets a share of its app's load: it runs,
// is Ready and is not terminating (the endpoints controllers take
// terminating pods out of service).
func ServesTraffic(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// CountReady counts the pods that serve traffic per app, which is what a
// member publishes with PublishReady. Pods without an app label are not
// counted.
func CountReady(pods []*corev1.Pod) map[string]int {
	counts := map[string]int{}
	for _, pod := range pods {
		if app := pod.Labels[AppLabel]; app != "" && ServesTraffic(pod) {
			counts[app]++
		}
	}
	return counts
}

// CapCPU caps milli, the uncapped CPU share of pod from View.PodCPU, at what
// the pod could use: the sum of its containers' CPU limits when every
// container has one; otherwise CPURequestHeadroom times the sum of its CPU
// requests when there are any; otherwise milli is returned unchanged.
func CapCPU(pod *corev1.Pod, milli int64) int64 {
	var limits, requests int64
	allLimited := len(pod.Spec.Containers) > 0
	for _, c := range pod.Spec.Containers {
		if l, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
			limits += l.MilliValue()
		} else {
			allLimited = false
		}
		if r, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			requests += r.MilliValue()
		}
	}
	switch {
	case allLimited:
		return min(milli, limits)
	case requests > 0:
		return min(milli, CPURequestHeadroom*requests)
	default:
		return milli
	}
}

// MemoryUsage is the simulated memory use of pod in bytes, which does not
// depend on traffic: per container half its memory request, or half its
// memory limit when it has no request, or DefaultContainerMemory.
// Half keeps a memory-based HPA with a usual target (above 50%) stable.
func MemoryUsage(pod *corev1.Pod) int64 {
	var total int64
	for _, c := range pod.Spec.Containers {
		if r, ok := c.Resources.Requests[corev1.ResourceMemory]; ok && r.Value() > 0 {
			total += r.Value() / 2
		} else if l, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && l.Value() > 0 {
			total += l.Value() / 2
		} else {
			total += DefaultContainerMemory
		}
	}
	return total
}

// PodUsage is the whole-pod usage of pod in member self: its capped CPU
// share and its MemoryUsage. It has the shape the metrics server's
// Options.PodUsage wants.
func (v *View) PodUsage(pod *corev1.Pod) corev1.ResourceList {
	cpu := CapCPU(pod, v.PodCPU(pod.Labels[AppLabel], ServesTraffic(pod)))
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(MemoryUsage(pod), resource.BinarySI),
	}
}
