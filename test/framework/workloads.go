package framework

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// Deployment starts a Deployment of app for the simulated world, which
// sends app's load to the pods labelled app=APP: utiltesting.MakeDeployment
// with image registry.example/APP:1 and a 64Mi memory request. Give it a CPU
// request (Request) for the world's load to be measured against.
func Deployment(app, ns string) *utiltesting.DeploymentWrapper {
	return utiltesting.MakeDeployment(app, ns).Image("registry.example/"+app+":1").
		Request(corev1.ResourceMemory, "64Mi")
}

// HPA, named app, scales the Deployment app between 1 and maxReplicas at
// 50% CPU.
func HPA(app, ns string, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: app},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
				},
			}},
		},
	}
}

// ReadyPods counts the Ready pods of app in namespace ns (pods being
// deleted do not count).
func ReadyPods(ctx context.Context, cs kubernetes.Interface, ns, app string) (int, error) {
	ready, _, err := PodCounts(ctx, cs, ns, app)
	return ready, err
}

// PodCounts counts the pods of app in namespace ns that are Ready and those
// Pending because the scheduler found no room (pods being deleted do not
// count).
func PodCounts(ctx context.Context, cs kubernetes.Interface, ns, app string) (ready, unschedulable int, err error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				unschedulable++
			}
		}
	}
	return ready, unschedulable, nil
}
