package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestIPAllocator(t *testing.T) {
	a := newIPAllocator()
	a.claim("n-0", "10.244.0.2", "old")
	first, err := a.assign("n-0", 0, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if first != "10.244.0.3" {
		t.Errorf("first free IP: got %s, want 10.244.0.3 (10.244.0.2 was claimed)", first)
	}
	again, _ := a.assign("n-0", 0, "p1")
	if again != first {
		t.Errorf("same pod got a second IP %s (had %s)", again, first)
	}
	a.release("n-0", "old")
	reused, _ := a.assign("n-0", 0, "p2")
	if reused != "10.244.0.2" {
		t.Errorf("released IP not reused: got %s", reused)
	}
	other, _ := a.assign("n-1", 1, "p3")
	if other != "10.244.1.2" {
		t.Errorf("node 1 IP: got %s, want 10.244.1.2", other)
	}
	// A /24 holds 253 pods (.2 to .254).
	full := newIPAllocator()
	for i := 0; i < 254; i++ {
		_, err = full.assign("n-0", 0, types.UID(rune(i)+'A'))
	}
	if err == nil {
		t.Error("254th pod on one node got an IP; want an error")
	}
}

func TestQOSClass(t *testing.T) {
	res := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	cases := map[string]struct {
		requests, limits corev1.ResourceList
		want             corev1.PodQOSClass
	}{
		"nothing set":               {want: corev1.PodQOSBestEffort},
		"requests only":             {requests: res("100m", ""), want: corev1.PodQOSBurstable},
		"limits equal requests":     {requests: res("1", "1Gi"), limits: res("1", "1Gi"), want: corev1.PodQOSGuaranteed},
		"limits only (cpu and mem)": {limits: res("1", "1Gi"), want: corev1.PodQOSGuaranteed},
		"limits above requests":     {requests: res("500m", "1Gi"), limits: res("1", "1Gi"), want: corev1.PodQOSBurstable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Resources: corev1.ResourceRequirements{Requests: tc.requests, Limits: tc.limits},
			}}}}
			if got := qosClass(pod); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNodeSpec(t *testing.T) {
	spec := NodeSpec{Prefix: "member1", Count: 2, CPU: resource.MustParse("8"), Memory: resource.MustParse("32Gi"),
		MaxPods: 110, Region: "cn-east", Zone: "cn-east-1a", Provider: "atoll-sim"}
	node := spec.node(1)
	if node.Name != "member1-1" || node.Labels[corev1.LabelTopologyRegion] != "cn-east" || node.Labels[corev1.LabelTopologyZone] != "cn-east-1a" {
		t.Errorf("node identity/labels wrong: %s %v", node.Name, node.Labels)
	}
	st := spec.status(1, nowForTest)
	if st.Allocatable.Cpu().String() != "8" || st.Allocatable.Pods().Value() != 110 {
		t.Errorf("allocatable: %v", st.Allocatable)
	}
	ready := false
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		t.Error("node status is not Ready")
	}
}

var nowForTest = metav1.Now()
