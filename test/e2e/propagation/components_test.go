package propagation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/componentfit"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var flinkDeployments = schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}

// TestMultiComponentWorkload: a FlinkDeployment (a job manager and task
// managers, two pod shapes in one template) gets a binding whose
// spec.components describe both, as Karmada's built-in interpretation of
// the kind does; placed on exactly one cluster it goes to a member whose
// free resources hold every component, and lands there. One too large for
// any member is unschedulable and says which resource is short.
func TestMultiComponentWorkload(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	const ns = "components"
	framework.CreateNamespace(t, c, ns)
	framework.CreateAndCleanup(t, c, flinkCRD(),
		utiltesting.MakePropagationPolicy("flink-crd", "").Select("apiextensions.k8s.io/v1", "CustomResourceDefinition", "flinkdeployments.flink.apache.org").
			ClusterNames(members...).ClusterObj())
	oneCluster := &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: members},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated},
	}
	framework.CreateAndCleanup(t, c, utiltesting.MakePropagationPolicy("flink", ns).Select("flink.apache.org/v1beta1", "FlinkDeployment", "").Placement(oneCluster).Obj())
	framework.Eventually(t, time.Minute, "the control plane serves FlinkDeployments", func() (bool, string) {
		err := c.Create(ctx, flink(ns, "wordcount", 1, "0.1"))
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	framework.DeleteOnCleanup(t, c, flink(ns, "wordcount", 1, "0.1"))

	var target string
	framework.Eventually(t, 2*time.Minute, "wordcount's binding has its components and one cluster", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "wordcount-flinkdeployment")
		if err != nil {
			return false, err.Error()
		}
		if got := componentsString(rb.Spec.Components); got != "jobmanager:1(cpu=50m,memory=100m) taskmanager:1(cpu=100m,memory=100m)" {
			return false, "components " + got
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) != 1 {
			return false, fmt.Sprintf("clusters %v, conditions %v", rb.Spec.Clusters, rb.Status.Conditions)
		}
		target = rb.Spec.Clusters[0].Name
		return true, ""
	})
	framework.Eventually(t, time.Minute, "wordcount in "+target, func() (bool, string) {
		return exists(ctx, world.MemberDynamic(t, target).Resource(flinkDeployments).Namespace(ns), "wordcount")
	})

	// 100 task managers of 100 CPUs each fit in no member.
	huge := flink(ns, "huge", 100, "100")
	framework.CreateAndCleanup(t, c, huge)
	framework.Eventually(t, time.Minute, "huge is unschedulable for lack of CPU", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "huge-flinkdeployment")
		if err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil {
			return false, "no Scheduled condition"
		}
		return cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, componentfit.Reason+"cpu") && len(rb.Spec.Clusters) == 0,
			cond.Reason + ": " + cond.Message
	})
}

func componentsString(comps []workv1alpha2.Component) string {
	var parts []string
	for _, comp := range comps {
		var res []string
		if r := comp.ReplicaRequirements; r != nil {
			for _, name := range []string{"cpu", "memory"} {
				if q, ok := r.ResourceRequest[corev1.ResourceName(name)]; ok {
					res = append(res, name+"="+q.String())
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s:%d(%s)", comp.Name, comp.Replicas, strings.Join(res, ",")))
	}
	return strings.Join(parts, " ")
}

func flinkCRD() *unstructured.Unstructured {
	return schemalessCRD("flink.apache.org", "v1beta1", "FlinkDeployment", "flinkdeployments")
}

// flink is a FlinkDeployment as Karmada's e2e spec writes one: the task
// managers come from the job's parallelism over the task slots.
func flink(ns, name string, parallelism int64, taskCPU string) *unstructured.Unstructured {
	cpu, _ := resource.ParseQuantity(taskCPU)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"flinkConfiguration": map[string]any{"taskmanager.numberOfTaskSlots": "1"},
			"image":              "flink:1.17",
			"job":                map[string]any{"parallelism": parallelism, "jarURI": "local:///opt/flink/examples/streaming/StateMachineExample.jar"},
			"jobManager":         map[string]any{"replicas": int64(1), "resource": map[string]any{"cpu": 0.05, "memory": "100m"}},
			"taskManager":        map[string]any{"resource": map[string]any{"cpu": cpu.AsApproximateFloat64(), "memory": "100m"}},
		},
	}}
}
