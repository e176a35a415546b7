package interpreter

import (
	"context"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Multi-component workloads: one template runs pods of several shapes
// (a Flink job manager and task managers, a Volcano job's tasks). Karmada
// records each shape in the binding's spec.components (replicas and what
// one replica needs) so the scheduler can place the workload as a whole;
// Karmada's componentResource customizations (GetComponents) describe
// them, and it ships them for FlinkDeployment and Volcano's Job. atoll
// runs a customization's componentResource script, and knows those two
// kinds natively (below; their rules are Karmada's, written in Go).

var (
	flinkDeploymentGK = schema.GroupKind{Group: "flink.apache.org", Kind: "FlinkDeployment"}
	volcanoJobGK      = schema.GroupKind{Group: "batch.volcano.sh", Kind: "Job"}
)

// nativeComponents are the kinds atoll describes as components itself.
var nativeComponents = map[schema.GroupKind]func(*unstructured.Unstructured) ([]workv1alpha2.Component, error){
	flinkDeploymentGK: flinkComponents,
	volcanoJobGK:      volcanoComponents,
}

// HasComponents reports whether templates of kind gvk are multi-component
// workloads: a customization with a componentResource script, or a kind
// atoll knows as one.
func (i *Interpreter) HasComponents(ctx context.Context, gvk schema.GroupVersionKind) bool {
	if c, _ := i.script(ctx, gvk, ComponentResource); c != nil {
		return true
	}
	_, ok := nativeComponents[gvk.GroupKind()]
	return ok
}

// Components describes obj's components (nil for kinds that have none).
func (i *Interpreter) Components(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	c, err := i.script(ctx, obj.GroupVersionKind(), ComponentResource)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c.components(ctx, obj)
	}
	native := nativeComponents[obj.GroupVersionKind().GroupKind()]
	if native == nil {
		return nil, nil
	}
	out, err := native(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return out, nil
}

func (c *compiled) components(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	out, err := c.call(ctx, "GetComponents", 1, nil, obj.Object)
	if err != nil {
		return nil, err
	}
	if out[0] == nil {
		return nil, nil
	}
	var comps []workv1alpha2.Component
	if err := decode(out[0], &comps); err != nil {
		return nil, c.fail(fmt.Errorf("GetComponents returned %T, want a list of components (name, replicas, replicaRequirements): %w", out[0], err))
	}
	for i, comp := range comps {
		if comp.Name == "" || comp.Replicas < 0 {
			return nil, c.fail(fmt.Errorf("GetComponents: component %d needs a name and replicas ≥ 0", i))
		}
	}
	return comps, nil
}

// flinkComponents: the job manager (spec.jobManager.replicas, default 1)
// and the task managers (spec.taskManager.replicas, else the job's
// parallelism over taskmanager.numberOfTaskSlots rounded up, else 1),
// each requesting its spec.*.resource cpu and memory, with the node
// constraints and priority class of spec.podTemplate.
func flinkComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	pod, err := optionalPodSpec(obj, "spec", "podTemplate", "spec")
	if err != nil {
		return nil, err
	}
	manager := func(name, field string, replicas int64) (workv1alpha2.Component, error) {
		req := &workv1alpha2.ComponentReplicaRequirements{}
		list := corev1.ResourceList{}
		for res, key := range map[corev1.ResourceName]string{corev1.ResourceCPU: "cpu", corev1.ResourceMemory: "memory"} {
			v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", field, "resource", key)
			if !found || v == nil {
				continue
			}
			q, err := quantity(v)
			if err != nil {
				return workv1alpha2.Component{}, fmt.Errorf("spec.%s.resource.%s: %w", field, key, err)
			}
			list[res] = q
		}
		if len(list) > 0 {
			req.ResourceRequest = list
		}
		if pod != nil {
			req.NodeClaim = componentClaim(pod)
			req.PriorityClassName = pod.PriorityClassName
		}
		if replicas < 0 || replicas > math.MaxInt32 {
			return workv1alpha2.Component{}, fmt.Errorf("%s replicas %d out of range", name, replicas)
		}
		return workv1alpha2.Component{Name: name, Replicas: int32(replicas), ReplicaRequirements: req}, nil
	}
	jm := number(obj, 1, "spec", "jobManager", "replicas")
	tm := number(obj, -1, "spec", "taskManager", "replicas")
	if tm < 0 {
		parallelism := number(obj, -1, "spec", "job", "parallelism")
		slots := number(obj, -1, "spec", "flinkConfiguration", "taskmanager.numberOfTaskSlots")
		tm = 1
		if parallelism >= 0 && slots > 0 {
			tm = (parallelism + slots - 1) / slots
		}
	}
	jobManager, err := manager("jobmanager", "jobManager", jm)
	if err != nil {
		return nil, err
	}
	taskManager, err := manager("taskmanager", "taskManager", tm)
	if err != nil {
		return nil, err
	}
	return []workv1alpha2.Component{jobManager, taskManager}, nil
}

// volcanoComponents: one component per spec.tasks entry, named by the
// task (task-<index> when unnamed), with the task's minAvailable as
// replicas (default 1: the gang the job needs to run) and its pod
// template's requirements.
func volcanoComponents(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	tasks, _, err := unstructured.NestedSlice(obj.Object, "spec", "tasks")
	if err != nil {
		return nil, fmt.Errorf("spec.tasks: %w", err)
	}
	out := make([]workv1alpha2.Component, 0, len(tasks))
	for i, t := range tasks {
		task, ok := t.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.tasks[%d] is not an object", i)
		}
		name, _, _ := unstructured.NestedString(task, "name")
		if name == "" {
			name = "task-" + strconv.Itoa(i)
		}
		replicas := number(&unstructured.Unstructured{Object: task}, 1, "minAvailable")
		if replicas < 0 || replicas > math.MaxInt32 {
			return nil, fmt.Errorf("spec.tasks[%d].minAvailable %d out of range", i, replicas)
		}
		var template corev1.PodTemplateSpec
		if raw, found, _ := unstructured.NestedMap(task, "template"); found {
			if err := fromMap(raw, fmt.Sprintf("spec.tasks[%d].template", i), &template); err != nil {
				return nil, err
			}
		}
		comp := workv1alpha2.Component{Name: name, Replicas: int32(replicas)}
		if r := podRequirements(&template); r != nil {
			comp.ReplicaRequirements = &workv1alpha2.ComponentReplicaRequirements{
				NodeClaim: r.NodeClaim, ResourceRequest: r.ResourceRequest, PriorityClassName: r.PriorityClassName}
		}
		out = append(out, comp)
	}
	return out, nil
}

// number reads an integer field that may be written as a number or a
// string ("2"); def when absent or not a number.
func number(obj *unstructured.Unstructured, def int64, path ...string) int64 {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if !found {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(math.Ceil(n))
	case string:
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i
		}
	}
	return def
}

// quantity reads a resource amount written as a number (cpu: 0.05) or a
// quantity string (memory: 100m, 2Gi).
func quantity(v any) (resource.Quantity, error) {
	switch n := v.(type) {
	case int64:
		return *resource.NewQuantity(n, resource.DecimalSI), nil
	case float64:
		return resource.ParseQuantity(strconv.FormatFloat(n, 'f', -1, 64))
	case string:
		return resource.ParseQuantity(n)
	}
	return resource.Quantity{}, fmt.Errorf("%v is not a quantity", v)
}

func optionalPodSpec(obj *unstructured.Unstructured, path ...string) (*corev1.PodSpec, error) {
	raw, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return nil, nil
	}
	var spec corev1.PodSpec
	if err := fromMap(raw, fieldPath(path), &spec); err != nil {
		return nil, err
	}
	return &spec, nil
}

// componentClaim is the node selector and tolerations of a pod spec
// (Karmada's FlinkDeployment rule takes only those two).
func componentClaim(spec *corev1.PodSpec) *workv1alpha2.NodeClaim {
	if len(spec.NodeSelector) == 0 && len(spec.Tolerations) == 0 {
		return nil
	}
	return &workv1alpha2.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
}
