package executor

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// autoscalerBounds are the per-cluster minReplicas/maxReplicas of an HPA
// template whose workload is divided over clusters: the template's bounds
// apportioned by the workload's distribution, with the floors and caps of a
// move under way (rebalance.HPABounds). nil leaves the template's bounds as
// they are: not an HPA, no such workload binding, or a workload that is not
// divided (every cluster then runs the whole workload and gets the whole
// range).
func (r *reconciler) autoscalerBounds(ctx context.Context, template *unstructured.Unstructured) map[string]rebalance.Bounds {
	target, ok := interpreter.ScaleTargetOf(template)
	if !ok || template.GetNamespace() == "" {
		return nil
	}
	var wb workv1alpha2.ResourceBinding
	key := client.ObjectKey{Namespace: template.GetNamespace(), Name: names.BindingName(target.Kind, target.Name)}
	if err := r.client.Get(ctx, key, &wb); err != nil {
		return nil
	}
	if !rebalance.Divided(wb.Spec.Placement) || wb.Spec.Resource.Name != target.Name {
		return nil
	}
	limits, err := rebalance.ParseLimits(wb.Annotations[rebalance.HPALimitsAnnotation])
	if err != nil {
		klog.FromContext(ctx).Error(err, "Ignoring the HPA limits of a move", "binding", klog.KObj(&wb))
	}
	lo, hi := interpreter.AutoscalerBounds(template)
	return rebalance.HPABounds(rebalance.FromTargets(wb.Spec.Clusters), lo, hi, limits)
}

// workloadHandler re-renders the HPAs of a workload whose distribution or
// HPA limits changed, since their per-cluster bounds follow it.
func (r *reconciler) workloadHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], b *workv1alpha2.ResourceBinding) {
		gv, err := schema.ParseGroupVersion(b.Spec.Resource.APIVersion)
		if err != nil {
			return
		}
		var hpas autoscalingv2.HorizontalPodAutoscalerList
		if err := r.client.List(ctx, &hpas, client.InNamespace(b.Namespace), client.UnsafeDisableDeepCopy,
			client.MatchingFields{indexer.ScaleTarget: indexer.ScaleTargetKey(gv.Group, b.Spec.Resource.Kind, b.Spec.Resource.Name)}); err != nil {
			klog.FromContext(ctx).Error(err, "Listing the HPAs of a workload", "binding", klog.KObj(b))
			return
		}
		for i := range hpas.Items {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: b.Namespace,
				Name: names.BindingName(interpreter.AutoscalerGroupKind().Kind, hpas.Items[i].Name)}})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if b, ok := e.Object.(*workv1alpha2.ResourceBinding); ok && len(b.Spec.Clusters) > 0 {
				enqueue(ctx, q, b)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*workv1alpha2.ResourceBinding)
			n, ok2 := e.ObjectNew.(*workv1alpha2.ResourceBinding)
			if !ok1 || !ok2 {
				return
			}
			if !semantic.Equal(o.Spec.Clusters, n.Spec.Clusters) ||
				o.Annotations[rebalance.HPALimitsAnnotation] != n.Annotations[rebalance.HPALimitsAnnotation] {
				enqueue(ctx, q, n)
			}
		},
	}
}
