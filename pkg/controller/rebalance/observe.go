package rebalance

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/scheduler/division"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// world is what one reconcile of a Rebalance sees.
type world struct {
	binding *workv1alpha2.ResourceBinding
	gk      schema.GroupKind
	// current is the binding's spec.clusters.
	current rebalance.Distribution
	// target is the scheduler's result (nil: no move handed over).
	target rebalance.Distribution
	// hpa is the control-plane HPA scaling the workload, when member HPAs
	// own its replicas.
	hpa      *autoscalingv2.HorizontalPodAutoscaler
	observed map[string]observed
	clusters []*clusterv1alpha1.Cluster
	limits   rebalance.Limits
}

// observed is one member's reported state.
type observed struct {
	reported        bool
	replicas, ready int32
	// current: the report reflects the binding's present spec.clusters,
	// as the member's own controller has processed it (see observedOf).
	current     bool
	hpaReported bool
	hpaDesired  int32
}

// observedOf reads one cluster's status item. synced says the executor's
// status was written for the binding's present generation, so each item
// was read after that generation was applied to its cluster; the item is
// current when, besides, the member's controller has observed the member
// object's generation. Only a current report's ready count says the new
// pods of a step are there: an older one can still count pods that a
// step since took away (issue 14's CI failure of TestRollback: a rollback
// counted member1's five Ready pods from before it went to four, and
// scaled member2 down while member1 had four).
func observedOf(gk schema.GroupKind, item workv1alpha2.AggregatedStatusItem, synced bool) observed {
	o := observed{reported: item.Status != nil}
	s := interpreter.StatusOf(item)
	if s == nil {
		return o
	}
	o.replicas, o.ready = interpreter.ReplicaCounts(gk, s)
	o.current = synced && interpreter.ReflectedCurrent(s)
	return o
}

// observe reads the binding, its target, the member counts its status
// reports and, when an HPA scales the workload, its HPA's binding.
func (r *reconciler) observe(ctx context.Context, rb *appsv1alpha1.Rebalance) (*world, error) {
	w := &world{observed: map[string]observed{}}
	key := client.ObjectKey{Namespace: rb.Namespace, Name: names.BindingName(rb.Spec.Workload.Kind, rb.Spec.Workload.Name)}
	var b workv1alpha2.ResourceBinding
	if err := r.client.Get(ctx, key, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading binding %s: %w", key, err)
	}
	gv, err := schema.ParseGroupVersion(rb.Spec.Workload.APIVersion)
	if err != nil || b.Spec.Resource.Kind != rb.Spec.Workload.Kind || b.Spec.Resource.Name != rb.Spec.Workload.Name {
		return nil, nil
	}
	w.binding, w.gk = &b, gv.WithKind(rb.Spec.Workload.Kind).GroupKind()
	w.current = rebalance.FromTargets(b.Spec.Clusters)
	if v, ok := b.Annotations[rebalance.TargetAnnotation]; ok {
		ts, err := rebalance.DecodeTarget(v)
		if err != nil {
			return nil, err
		}
		w.target = rebalance.FromTargets(ts)
	}
	if w.limits, err = rebalance.ParseLimits(b.Annotations[rebalance.HPALimitsAnnotation]); err != nil {
		klog.FromContext(ctx).Error(err, "Ignoring unreadable HPA limits", "binding", klog.KObj(&b))
	}
	synced := bindingkind.ExecutorSynced(&b.Status, b.Generation)
	for _, item := range b.Status.AggregatedStatus {
		w.observed[item.ClusterName] = observedOf(w.gk, item, synced)
	}

	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := r.client.List(ctx, &hpas, client.InNamespace(rb.Namespace),
		client.MatchingFields{indexer.ScaleTarget: indexer.ScaleTargetKey(gv.Group, rb.Spec.Workload.Kind, rb.Spec.Workload.Name)}); err != nil {
		return nil, fmt.Errorf("listing HPAs of %s: %w", key, err)
	}
	for i := range hpas.Items {
		h := &hpas.Items[i]
		if h.DeletionTimestamp != nil {
			continue
		}
		var hb workv1alpha2.ResourceBinding
		hkey := client.ObjectKey{Namespace: h.Namespace, Name: names.BindingName(interpreter.AutoscalerGroupKind().Kind, h.Name)}
		if err := r.client.Get(ctx, hkey, &hb); err != nil {
			continue // not propagated: the members have no HPA of it
		}
		w.hpa = h
		for _, item := range hb.Status.AggregatedStatus {
			o := w.observed[item.ClusterName]
			_, o.hpaDesired, o.hpaReported = interpreter.AutoscalerStatus(interpreter.StatusOf(item))
			w.observed[item.ClusterName] = o
		}
		break
	}

	var list clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing clusters: %w", err)
	}
	for i := range list.Items {
		w.clusters = append(w.clusters, &list.Items[i])
	}
	return w, nil
}

// running is the distribution the members run now: for HPA-owned replicas
// the member counts (spec.clusters only seeds them), else spec.clusters.
func (w *world) running() rebalance.Distribution {
	if w.hpa == nil {
		return w.current
	}
	d := rebalance.Distribution{}
	for c, n := range w.current {
		if o := w.observed[c]; o.reported {
			n = max(o.replicas, o.hpaDesired)
		}
		if n > 0 {
			d[c] = n
		}
	}
	return d
}

// policyWeights are the weights the policy gives the target's clusters:
// the static weights of a static-weighted placement, else the target's own
// counts. A move of HPA-owned replicas divides the running total by them
// (the template's replica count is not what runs).
func (w *world) policyWeights() map[string]int64 {
	p := w.binding.Spec.Placement
	if p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.WeightPreference != nil &&
		p.ReplicaScheduling.WeightPreference.DynamicWeight == "" && len(p.ReplicaScheduling.WeightPreference.StaticWeightList) > 0 {
		var in []*clusterv1alpha1.Cluster
		for _, c := range w.clusters {
			if w.target[c.Name] > 0 {
				in = append(in, c)
			}
		}
		if ws, err := division.StaticWeights(in, p.ReplicaScheduling.WeightPreference); err == nil && len(ws) > 0 {
			out := map[string]int64{}
			for _, cw := range ws {
				out[cw.Name] = cw.Weight
			}
			return out
		}
	}
	return w.target.Weights()
}

// cluster returns a cluster by name (nil when it does not exist).
func (w *world) cluster(name string) *clusterv1alpha1.Cluster {
	for _, c := range w.clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// unhealthy names the clusters of d that cannot take part in a step.
func (w *world) unhealthy(ds ...rebalance.Distribution) []string {
	var out []string
	for _, c := range rebalance.Union(ds...) {
		if !rebalance.Healthy(w.cluster(c)) {
			out = append(out, c)
		}
	}
	return out
}

// scaleDownWindows reads the effective scale-down stabilization window of
// the member HPAs of clusters (one GET each, once per step), for the ETA
// and the deadline.
func (r *reconciler) scaleDownWindows(ctx context.Context, w *world, clusters []string) map[string]int32 {
	out := map[string]int32{}
	if w.hpa == nil || r.cc == nil {
		return out
	}
	gvr := schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	for _, c := range clusters {
		m, err := r.cc.Member(ctx, c)
		if err != nil {
			continue
		}
		obj, err := m.Dynamic.Resource(gvr).Namespace(w.hpa.Namespace).Get(ctx, w.hpa.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		out[c] = interpreter.ScaleDownWindowSeconds(obj)
	}
	return out
}
