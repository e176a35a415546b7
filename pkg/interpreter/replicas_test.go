package interpreter

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func container(name string, requests map[string]string) map[string]any {
	c := map[string]any{"name": name, "image": "nginx"}
	if requests != nil {
		r := map[string]any{}
		for k, v := range requests {
			r[k] = v
		}
		c["resources"] = map[string]any{"requests": r}
	}
	return c
}

func podSpec(containers ...map[string]any) map[string]any {
	list := make([]any, len(containers))
	for i, c := range containers {
		list[i] = c
	}
	return map[string]any{"containers": list}
}

func workloadObj(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec":     spec,
	}}
}

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestNativeReplicas(t *testing.T) {
	twoContainers := podSpec(container("a", map[string]string{"cpu": "100m", "memory": "64Mi"}), container("b", map[string]string{"cpu": "200m"}))
	withInit := podSpec(container("a", map[string]string{"cpu": "100m"}))
	withInit["initContainers"] = []any{container("init", map[string]string{"cpu": "1", "memory": "10Mi"})}
	constrained := podSpec(container("a", nil))
	constrained["nodeSelector"] = map[string]any{"disk": "ssd"}
	constrained["tolerations"] = []any{map[string]any{"key": "gpu", "operator": "Exists"}}

	type workload struct {
		Replicas     int32
		Requirements *workv1alpha2.ReplicaRequirements
	}
	cases := map[string]struct {
		gk   schema.GroupKind
		obj  *unstructured.Unstructured
		want workload
	}{
		"deployment sums containers": {deploymentGK,
			workloadObj("apps/v1", "Deployment", map[string]any{"replicas": int64(3), "template": map[string]any{"spec": twoContainers}}),
			workload{Replicas: 3, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "300m", "memory", "64Mi")}}},
		"deployment without replicas": {deploymentGK,
			workloadObj("apps/v1", "Deployment", map[string]any{"template": map[string]any{"spec": twoContainers}}),
			workload{Replicas: 0, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "300m", "memory", "64Mi")}}},
		"statefulset init container max": {statefulSetGK,
			workloadObj("apps/v1", "StatefulSet", map[string]any{"replicas": int64(2), "template": map[string]any{"spec": withInit}}),
			workload{Replicas: 2, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "1", "memory", "10Mi")}}},
		"replicaset": {replicaSetGK,
			workloadObj("apps/v1", "ReplicaSet", map[string]any{"replicas": int64(4), "template": map[string]any{"spec": twoContainers}}),
			workload{Replicas: 4, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "300m", "memory", "64Mi")}}},
		"job parallelism": {jobGK,
			workloadObj("batch/v1", "Job", map[string]any{"parallelism": int64(5), "completions": int64(10), "template": map[string]any{"spec": twoContainers}}),
			workload{Replicas: 5, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "300m", "memory", "64Mi")}}},
		"pod is one replica": {podGK,
			workloadObj("v1", "Pod", twoContainers),
			workload{Replicas: 1, Requirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "300m", "memory", "64Mi")}}},
		"no requests, no requirements": {deploymentGK,
			workloadObj("apps/v1", "Deployment", map[string]any{"replicas": int64(1), "template": map[string]any{"spec": podSpec(container("a", nil))}}),
			workload{Replicas: 1}},
		"node claim": {deploymentGK,
			workloadObj("apps/v1", "Deployment", map[string]any{"replicas": int64(1), "template": map[string]any{"spec": constrained}}),
			workload{Replicas: 1, Requirements: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{
				NodeSelector: map[string]string{"disk": "ssd"},
				Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
			}}}},
		"not a workload": {schema.GroupKind{Kind: "ConfigMap"},
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}}},
			workload{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, req, err := Native.Replicas(context.Background(), tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, workload{n, req}, quantityCmp); diff != "" {
				t.Errorf("Replicas (-want +got):\n%s", diff)
			}
		})
	}
}

var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestHasReplicas(t *testing.T) {
	cases := map[string]struct {
		gk   schema.GroupKind
		want bool
	}{
		"deployment":          {deploymentGK, true},
		"job":                 {jobGK, true},
		"configmap":           {schema.GroupKind{Kind: "ConfigMap"}, false},
		"deployment of a CRD": {schema.GroupKind{Group: "example.com", Kind: "Deployment"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Native.HasReplicas(context.Background(), tc.gk.WithVersion("v1")); got != tc.want {
				t.Errorf("HasReplicas = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNativeReviseJob(t *testing.T) {
	job := func(spec map[string]any) *unstructured.Unstructured {
		spec["template"] = map[string]any{"spec": podSpec(container("a", nil))}
		return workloadObj("batch/v1", "Job", spec)
	}
	cases := map[string]struct {
		template *unstructured.Unstructured
		share    int64
		wantSpec map[string]any
	}{
		"parallelism only": {
			template: job(map[string]any{"parallelism": int64(6)}), share: 2,
			wantSpec: map[string]any{"parallelism": int64(2)},
		},
		"completions shared in proportion, rounded up": {
			template: job(map[string]any{"parallelism": int64(4), "completions": int64(10)}), share: 1,
			wantSpec: map[string]any{"parallelism": int64(1), "completions": int64(3)},
		},
		"indexed completions are not split": {
			template: job(map[string]any{"parallelism": int64(4), "completions": int64(8), "completionMode": "Indexed"}), share: 2,
			wantSpec: map[string]any{"parallelism": int64(2), "completions": int64(8), "completionMode": "Indexed"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Native.Render(context.Background(), tc.template, ptr.To(tc.share))
			if err != nil {
				t.Fatal(err)
			}
			spec, _, _ := unstructured.NestedMap(got.Object, "spec")
			delete(spec, "template")
			if diff := cmp.Diff(tc.wantSpec, spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}
