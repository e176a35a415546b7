package baseline

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
)

// gate keeps the baseline taint on each cluster while any baseline gates
// it (baseline.Gates). It is keyed by cluster and reads every baseline, so
// two baselines finishing at once cannot both leave the taint to the other.
type gate struct {
	client   client.Client
	recorder recorder.EventRecorder
}

// Taint is the baseline taint.
var Taint = corev1.Taint{Key: appsv1alpha1.BaselineTaintKey, Effect: corev1.TaintEffectNoSchedule}

func (g *gate) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var c clusterv1alpha1.Cluster
	if err := g.client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var list appsv1alpha1.ClusterBaselineList
	if err := g.client.List(ctx, &list); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing baselines: %w", err)
	}
	var by []string
	for i := range list.Items {
		if baseline.Gates(&list.Items[i], c.Name, c.Labels, c.CreationTimestamp.Time) {
			by = append(by, list.Items[i].Name)
		}
	}
	has := slices.ContainsFunc(c.Spec.Taints, isBaselineTaint)
	want := len(by) > 0
	if has == want {
		return ctrl.Result{}, nil
	}
	orig := c.DeepCopy()
	if want {
		c.Spec.Taints = append(c.Spec.Taints, Taint)
	} else {
		c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, isBaselineTaint)
	}
	if err := g.client.Patch(ctx, &c, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the baseline taint of cluster %s: %w", c.Name, err)
	}
	if want {
		klog.FromContext(ctx).Info("Cluster waits for its baseline", "cluster", c.Name, "baselines", by)
		g.recorder.Eventf(&c, nil, corev1.EventTypeNormal, "BaselinePending", "Taint", "added %s:NoSchedule until baselines %v are ready", Taint.Key, by)
	} else {
		klog.FromContext(ctx).Info("Cluster baseline ready", "cluster", c.Name)
		g.recorder.Eventf(&c, nil, corev1.EventTypeNormal, "BaselineReady", "Taint", "removed %s: every baseline is ready", Taint.Key)
	}
	return ctrl.Result{}, nil
}

func isBaselineTaint(t corev1.Taint) bool {
	return t.Key == appsv1alpha1.BaselineTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}
