package hpamarker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// IndexScaleTarget indexes HPAs by the template they scale.
const IndexScaleTarget = indexer.ScaleTarget

// Key is a template the marker reconciles: one of a kind whose replicas
// member HPAs may own (interpreter.ScalableKinds).
type Key struct {
	Group, Kind, Namespace, Name string
}

// Options configure the controller.
type Options struct {
	// Shards limits the marker to the templates of the shards this
	// process holds (nil: all, on the elected leader).
	Shards *shard.Owner
}

type reconciler struct {
	client client.Client
}

// Setup adds the controller to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	r := &reconciler{client: mgr.GetClient()}
	b := builder.TypedControllerManagedBy[Key](mgr).
		Named("hpa-marker").
		WithOptions(controller.TypedOptions[Key]{NeedLeaderElection: opts.Shards.NeedLeaderElection()}).
		WatchesRawSource(shard.Source(opts.Shards, func(ctx context.Context, s int, add func(Key)) error {
			for _, gk := range interpreter.ScalableKinds() {
				list := &metav1.PartialObjectMetadataList{}
				list.SetGroupVersionKind(gk.WithVersion("v1").GroupVersion().WithKind(gk.Kind + "List"))
				if err := mgr.GetCache().List(ctx, list); err != nil {
					return err
				}
				for _, m := range list.Items {
					if k := (Key{Group: gk.Group, Kind: gk.Kind, Namespace: m.Namespace, Name: m.Name}); opts.Shards.Of(k.shardKey()) == s {
						add(k)
					}
				}
			}
			return nil
		})).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &autoscalingv2.HorizontalPodAutoscaler{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, h *autoscalingv2.HorizontalPodAutoscaler) []Key {
				if k, ok := targetOf(h); ok {
					return []Key{k}
				}
				return nil
			})))
	for _, gk := range interpreter.ScalableKinds() {
		b = b.WatchesRawSource(source.TypedKind(mgr.GetCache(), metadataOf(gk),
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, m *metav1.PartialObjectMetadata) []Key {
				return []Key{{Group: gk.Group, Kind: gk.Kind, Namespace: m.Namespace, Name: m.Name}}
			}),
			predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
				UpdateFunc: func(e event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool {
					return !equalMaps(e.ObjectOld.Labels, e.ObjectNew.Labels) || !equalMaps(e.ObjectOld.Annotations, e.ObjectNew.Annotations)
				},
			}))
	}
	return b.Complete(shard.Reconciler(opts.Shards, Key.shardKey, reconcile.TypedReconciler[Key](r)))
}

// shardKey is the template's binding.
func (k Key) shardKey() (string, string) { return k.Namespace, names.BindingName(k.Kind, k.Name) }

func metadataOf(gk schema.GroupKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gk.WithVersion("v1"))
	return m
}

// targetOf is the template an HPA scales, if it is one the marker handles.
func targetOf(h *autoscalingv2.HorizontalPodAutoscaler) (Key, bool) {
	ref := h.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.Name == "" {
		return Key{}, false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	if !slices.Contains(interpreter.ScalableKinds(), gk) {
		return Key{}, false
	}
	return Key{Group: gk.Group, Kind: gk.Kind, Namespace: h.Namespace, Name: ref.Name}, true
}

// Reconcile marks or unmarks one template.
func (r *reconciler) Reconcile(ctx context.Context, key Key) (ctrl.Result, error) {
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := r.client.List(ctx, &hpas, client.InNamespace(key.Namespace),
		client.MatchingFields{IndexScaleTarget: indexer.ScaleTargetKey(key.Group, key.Kind, key.Name)}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing HPAs of %s %s/%s: %w", key.Kind, key.Namespace, key.Name, err)
	}
	targeted := false
	for i := range hpas.Items {
		targeted = targeted || hpas.Items[i].DeletionTimestamp == nil
	}
	gk := schema.GroupKind{Group: key.Group, Kind: key.Kind}
	nn := types.NamespacedName{Namespace: key.Namespace, Name: key.Name}
	// Read from the cache without a copy (every template passes here after
	// a restart); m is only read. The patch decodes its answer into a
	// fresh object, never into the cache's.
	m := metadataOf(gk)
	if err := r.client.Get(ctx, nn, m, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	_, labelled := m.Labels[interpreter.RetainReplicasLabel]
	marked := m.Annotations[workv1alpha2.RetainReplicasByHPAAnnotation] == "true"
	var labels, annotations map[string]any
	switch {
	case targeted && !labelled:
		labels = map[string]any{interpreter.RetainReplicasLabel: "true"}
		annotations = map[string]any{workv1alpha2.RetainReplicasByHPAAnnotation: "true"}
	case !targeted && marked:
		labels = map[string]any{interpreter.RetainReplicasLabel: nil}
		annotations = map[string]any{workv1alpha2.RetainReplicasByHPAAnnotation: nil}
	default:
		return ctrl.Result{}, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": m.ResourceVersion, "labels": labels, "annotations": annotations,
	}})
	if err != nil {
		return ctrl.Result{}, err
	}
	target := metadataOf(gk)
	target.Namespace, target.Name = nn.Namespace, nn.Name
	if err := r.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(names.FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("marking %s %s/%s: %w", key.Kind, key.Namespace, key.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Template replicas ownership changed", "kind", key.Kind,
		"template", klog.KRef(key.Namespace, key.Name), "retainReplicas", targeted)
	return ctrl.Result{}, nil
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
