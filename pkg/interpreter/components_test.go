package interpreter

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter/script"
)

func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func requests(cpu, memory string) *workv1alpha2.ComponentReplicaRequirements {
	return &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}
}

func TestNativeComponents(t *testing.T) {
	cases := map[string]struct {
		obj  string
		want []workv1alpha2.Component
	}{
		"FlinkDeployment, task managers from parallelism and slots": {obj: `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: f, namespace: ns}
spec:
  flinkConfiguration: {taskmanager.numberOfTaskSlots: "2"}
  job: {parallelism: 3}
  jobManager: {replicas: 1, resource: {cpu: 0.05, memory: 100m}}
  taskManager: {resource: {cpu: 0.1, memory: 2Gi}}
  podTemplate: {spec: {nodeSelector: {pool: flink}, priorityClassName: high}}
`, want: []workv1alpha2.Component{
			{Name: "jobmanager", Replicas: 1, ReplicaRequirements: withClaim(requests("50m", "100m"))},
			{Name: "taskmanager", Replicas: 2, ReplicaRequirements: withClaim(requests("100m", "2Gi"))},
		}},
		"FlinkDeployment, explicit task managers, defaults": {obj: `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: f, namespace: ns}
spec:
  taskManager: {replicas: 4}
`, want: []workv1alpha2.Component{
			{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{}},
			{Name: "taskmanager", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{}},
		}},
		"Volcano Job: minAvailable per task": {obj: `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v, namespace: ns}
spec:
  tasks:
  - name: job-nginx1
    minAvailable: 1
    replicas: 1
    template: {spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 200m, memory: 100Mi}}}]}}
  - minAvailable: 2
    replicas: 3
    template: {spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 100Mi}}}]}}
  - name: no-requests
`, want: []workv1alpha2.Component{
			{Name: "job-nginx1", Replicas: 1, ReplicaRequirements: requests("200m", "100Mi")},
			{Name: "task-1", Replicas: 2, ReplicaRequirements: requests("100m", "100Mi")},
			{Name: "no-requests", Replicas: 1},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := fromYAML(t, tc.obj)
			if !Native.HasComponents(context.Background(), obj.GroupVersionKind()) {
				t.Fatal("HasComponents = false")
			}
			got, err := Native.Components(context.Background(), obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Fatalf("components (-want +got):\n%s", diff)
			}
		})
	}
	if Native.HasComponents(context.Background(), fromYAML(t, "{apiVersion: batch/v1, kind: Job}").GroupVersionKind()) {
		t.Error("a batch/v1 Job has components")
	}
}

func withClaim(r *workv1alpha2.ComponentReplicaRequirements) *workv1alpha2.ComponentReplicaRequirements {
	r.NodeClaim = &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"pool": "flink"}}
	r.PriorityClassName = "high"
	return r
}

// TestComponentResourceCustomization: a customization's componentResource
// script describes the components, and takes precedence over atoll's own
// knowledge of the kind; a script returning nonsense is an error naming
// the customization.
func TestComponentResourceCustomization(t *testing.T) {
	ric := configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "flink-components", ResourceVersion: "1"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment"},
			Customizations: configv1alpha1.CustomizationRules{ComponentResource: &configv1alpha1.LuaScript{LuaScript: `
function GetComponents(obj)
  return {{name = "all", replicas = obj.spec.size, replicaRequirements = {resourceRequest = {cpu = "2"}}}}
end`}},
		},
	}
	i := New(NewCustomizations(staticSource{ric}, script.DefaultLimits))
	obj := fromYAML(t, "{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, metadata: {name: f, namespace: ns}, spec: {size: 3}}")
	got, err := i.Components(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []workv1alpha2.Component{{Name: "all", Replicas: 3, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Fatalf("components (-want +got):\n%s", diff)
	}
	ric.Spec.Customizations.ComponentResource.LuaScript = `function GetComponents(obj) return "many" end`
	ric.ResourceVersion = "2"
	i = New(NewCustomizations(staticSource{ric}, script.DefaultLimits))
	if _, err := i.Components(context.Background(), obj); err == nil || !strings.Contains(err.Error(), "flink-components") {
		t.Fatalf("err = %v, want one naming the customization", err)
	}
}
