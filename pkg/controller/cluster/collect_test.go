package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// equalResources compares by value (1000m == 1) and fails with both lists.
func equalResources(t *testing.T, what string, got, want corev1.ResourceList) {
	t.Helper()
	ok := len(got) == len(want)
	for name, w := range want {
		if g, found := got[name]; !found || g.Cmp(w) != 0 {
			ok = false
		}
	}
	if !ok {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func container(kv ...string) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: resources(kv...)}}
}

func TestPodRequests(t *testing.T) {
	cases := map[string]struct {
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		"containers add up": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container("cpu", "100m", "memory", "64Mi"), container("cpu", "250m")}},
			want: resources("cpu", "350m", "memory", "64Mi"),
		},
		"a larger init container wins": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("cpu", "2")},
				Containers:     []corev1.Container{container("cpu", "500m", "memory", "1Gi")},
			},
			want: resources("cpu", "2", "memory", "1Gi"),
		},
		"sidecars run beside the containers and later init containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					func() corev1.Container {
						c := container("cpu", "200m")
						c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
						return c
					}(),
					container("cpu", "1"),
				},
				Containers: []corev1.Container{container("cpu", "300m")},
			},
			// max(300m + 200m sidecar, 1 + 200m sidecar)
			want: resources("cpu", "1200m"),
		},
		"overhead is added": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container("cpu", "100m")}, Overhead: resources("cpu", "50m")},
			want: resources("cpu", "150m"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			equalResources(t, "podRequests", podRequests(&corev1.Pod{Spec: tc.spec}), tc.want)
		})
	}
}

func TestPodUsage(t *testing.T) {
	pod := func(node string, phase corev1.PodPhase, cpu string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{container("cpu", cpu, "memory", "100Mi")}},
			Status:     corev1.PodStatus{Phase: phase},
		}
	}
	u := newPodUsage()
	for _, p := range []*corev1.Pod{
		pod("n1", corev1.PodRunning, "1"),
		pod("n2", corev1.PodRunning, "500m"),
		pod("n1", corev1.PodPending, "250m"), // bound, not started yet: allocated
		pod("", corev1.PodPending, "2"),      // waiting for the scheduler: allocating
		pod("n1", corev1.PodSucceeded, "8"),  // terminal: nothing
		pod("", corev1.PodFailed, "8"),       // terminal: nothing
		pod("n2", corev1.PodUnknown, "125m"), // bound: allocated
	} {
		u.add(p)
	}
	equalResources(t, "allocated", u.allocated, resources("cpu", "1875m", "memory", "400Mi", "pods", "4"))
	equalResources(t, "allocating", u.allocating, resources("cpu", "2", "memory", "100Mi", "pods", "1"))
}

func TestNodeSummary(t *testing.T) {
	node := func(ready corev1.ConditionStatus, cpu, mem string) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{Allocatable: resources("cpu", cpu, "memory", mem, "pods", "110")}}
		if ready != "" {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
		}
		return n
	}
	sum := &clusterv1alpha1.NodeSummary{}
	allocatable := corev1.ResourceList{}
	for _, n := range []*corev1.Node{
		node(corev1.ConditionTrue, "8", "32Gi"),
		node(corev1.ConditionTrue, "7500m", "30Gi"),
		node(corev1.ConditionFalse, "8", "32Gi"),
		node(corev1.ConditionUnknown, "8", "32Gi"),
		node("", "8", "32Gi"),
	} {
		addNode(sum, allocatable, n)
	}
	if sum.TotalNum != 5 || sum.ReadyNum != 2 {
		t.Errorf("nodes %d/%d ready, want 2/5", sum.ReadyNum, sum.TotalNum)
	}
	equalResources(t, "allocatable", allocatable, resources("cpu", "15500m", "memory", "62Gi", "pods", "220"))
}
