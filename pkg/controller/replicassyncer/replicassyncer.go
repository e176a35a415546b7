package replicassyncer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// ControllerName is the controller's name in --controllers (Karmada's
// deploymentReplicasSyncer also answers to it).
const ControllerName = "deployment-replicas-syncer"

// ReasonReplicasSynced is the event on the template when its spec.replicas
// is set to what the members run.
const ReasonReplicasSynced = "ReplicasSynced"

// statusWait is how soon a binding whose members have reported is looked
// at again while the template's aggregated status catches up.
const statusWait = time.Second

// Options configure the controller.
type Options struct {
	// Shards limits the controller to the bindings of the shards this
	// process holds (nil: all, on the elected leader).
	Shards *shard.Owner
}

type reconciler struct {
	client   client.Client
	reader   client.Reader // the API server, for the template's status
	recorder events.EventRecorder
}

// Setup adds the controller to mgr.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder("atoll-replicas-syncer")}
	deployments := &metav1.PartialObjectMetadata{}
	deployments.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return isDeployment(&o.(*workv1alpha2.ResourceBinding).Spec.Resource)
		}))).
		// A template edit (generation) or the label arriving after the
		// binding settled looks at the binding again.
		WatchesMetadata(deployments, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{
				Namespace: o.GetNamespace(), Name: names.BindingName("Deployment", o.GetName())}}}
		}), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return retains(e.ObjectNew) && (!retains(e.ObjectOld) || e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration())
			},
		})).
		WatchesRawSource(shard.BindingSource(opts.Shards, mgr.GetCache(), func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} })).
		WithOptions(controller.Options{NeedLeaderElection: opts.Shards.NeedLeaderElection(), NewQueue: queue.NewQueue[reconcile.Request](mgr.GetLogger())}).
		Complete(shard.Reconciler(opts.Shards, shard.RequestKey, reconcile.Reconciler(r)))
}

func isDeployment(ref *workv1alpha2.ObjectReference) bool {
	return ref.APIVersion == "apps/v1" && ref.Kind == "Deployment"
}

// retains reports the retain-replicas label: member HPAs own the replicas.
func retains(o metav1.Object) bool {
	_, ok := o.GetLabels()[interpreter.RetainReplicasLabel]
	return ok
}

// Reconcile brings one workload's template replicas to its members' sum.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var rb workv1alpha2.ResourceBinding
	// The binding is only read: no copy of it out of the cache.
	if err := r.client.Get(ctx, req.NamespacedName, &rb, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	sum, ok := membersSum(&rb)
	if !ok || sum == rb.Spec.Replicas {
		return ctrl.Result{}, nil
	}
	ref := rb.Spec.Resource
	var d appsv1.Deployment
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch {
	case !retains(&d) || d.DeletionTimestamp != nil || d.Spec.Replicas == nil:
		return ctrl.Result{}, nil
	case *d.Spec.Replicas != rb.Spec.Replicas:
		// The template was edited after the binding was written: the
		// binding event that follows brings the request back.
		return ctrl.Result{}, nil
	case d.Status.Replicas != sum:
		// The members' counts have not reached the template's status yet.
		return ctrl.Result{RequeueAfter: statusWait}, nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": d.ResourceVersion},
		"spec":     map[string]any{"replicas": sum},
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.client.Patch(ctx, &d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(names.FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		// A conflict means the template moved on; the retry reads it again.
		return ctrl.Result{}, fmt.Errorf("setting the replicas of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	r.recorder.Eventf(&d, nil, corev1.EventTypeNormal, ReasonReplicasSynced, "SyncReplicas",
		"spec.replicas %d -> %d: the member HPAs run %d replicas", rb.Spec.Replicas, sum, sum)
	klog.FromContext(ctx).V(1).Info("Template replicas follow the members", "deployment", klog.KObj(&d),
		"from", rb.Spec.Replicas, "to", sum)
	return ctrl.Result{}, nil
}

// membersSum is the replicas the binding's members run, when the binding
// is one whose template follows them and every member has settled (the
// conditions in the package documentation); ok is false otherwise.
func membersSum(rb *workv1alpha2.ResourceBinding) (sum int32, ok bool) {
	if !isDeployment(&rb.Spec.Resource) || rb.DeletionTimestamp != nil || !rebalance.Divided(rb.Spec.Placement) ||
		rb.Generation != rb.Status.SchedulerObservedGeneration || moving(rb) ||
		len(rb.Spec.Clusters) == 0 || len(rb.Status.AggregatedStatus) != len(rb.Spec.Clusters) {
		return 0, false
	}
	scheduled := map[string]bool{}
	for _, c := range rb.Spec.Clusters {
		scheduled[c.Name] = true
	}
	for _, item := range rb.Status.AggregatedStatus {
		if !scheduled[item.ClusterName] {
			// A cluster being withdrawn still reports: not settled.
			return 0, false
		}
		var s struct {
			Replicas           int32 `json:"replicas"`
			UpdatedReplicas    int32 `json:"updatedReplicas"`
			ObservedGeneration int64 `json:"observedGeneration"`
			Generation         int64 `json:"generation"`
		}
		if item.Status == nil || json.Unmarshal(item.Status.Raw, &s) != nil {
			return 0, false
		}
		if s.Replicas <= 0 || s.UpdatedReplicas != s.Replicas || s.ObservedGeneration < s.Generation {
			return 0, false
		}
		sum += s.Replicas
	}
	return sum, true
}

// moving reports a gradual move under way on the binding: its steps set
// the members' counts, and the template keeps the total the move divides.
func moving(rb *workv1alpha2.ResourceBinding) bool {
	for _, a := range []string{rebalance.TargetAnnotation, rebalance.StepAnnotation, rebalance.HPALimitsAnnotation} {
		if _, ok := rb.Annotations[a]; ok {
			return true
		}
	}
	return false
}
