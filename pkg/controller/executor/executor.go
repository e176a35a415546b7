package executor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/admission"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/controller/workers"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/templatecache"
)

// Finalizer keeps a binding until its member objects are withdrawn. Their
// creators set it; a binding without it (older ones, or a user's) gets it
// from the executor before anything is applied.
const Finalizer = workv1alpha2.CleanupFinalizer

// DefaultStatusInterval is the default coalescing window of binding status
// writes (--binding-status-coalesce-window).
const DefaultStatusInterval = 3 * time.Second

// Options configure the executor.
type Options struct {
	// Workers and ClusterWorkers bound concurrent reconciles of
	// ResourceBindings and ClusterResourceBindings (default
	// workers.Bindings; 0 for ClusterWorkers: as Workers).
	Workers, ClusterWorkers int
	// StatusInterval is the least time between two status writes of one
	// binding for member status churn; changes inside it are coalesced
	// (with the template's aggregated status). Default 3s.
	StatusInterval time.Duration
	// SweepPeriod is how often every Ready member is made to watch every
	// propagated resource, so copies no binding status records are found
	// (see sweeper). Default 5m.
	SweepPeriod time.Duration
	// Clock decides status coalescing and unresponsive windows. Default
	// the real clock.
	Clock clock.PassiveClock
	// Interpreter renders, retains, reflects and aggregates per kind.
	// Default interpreter.Native.
	Interpreter *interpreter.Interpreter
	// Templates is shared with the detector, which fills it when it reads
	// a template (default: the executor's own).
	Templates *templatecache.Cache
	// Shards limits the executor to the bindings of the shards this
	// process holds, and its sweep to their pending withdrawals (nil: all,
	// on the elected leader).
	Shards *shard.Owner
	// NamespaceAutoProvision: the detector places namespaces no policy
	// claims on every cluster, so a member namespace is created as its
	// binding's (namespaces.go).
	NamespaceAutoProvision bool
	// Handoff brings the scheduler's status part of a new placement (from
	// the scheduler in this process) into the executor's status write.
	Handoff *bindingkind.Handoff
}

// Setup adds the executor for both binding kinds to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, cc *clustercache.Cache, opts Options) error {
	if opts.Workers <= 0 {
		opts.Workers = workers.Bindings
	}
	if opts.ClusterWorkers <= 0 {
		opts.ClusterWorkers = opts.Workers
	}
	if opts.StatusInterval == 0 {
		opts.StatusInterval = DefaultStatusInterval
	}
	if opts.SweepPeriod == 0 {
		opts.SweepPeriod = 5 * time.Minute
	}
	if opts.Interpreter == nil {
		opts.Interpreter = interpreter.Native
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Templates == nil {
		opts.Templates = templatecache.New()
	}
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	listClient, err := clustercache.NewWireClient(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("building the executor's template list client: %w", err)
	}
	lists := newTemplateLists(ctx, listClient, opts.Templates, opts.Shards)
	for _, kind := range []kind{namespacedKind, clusterKind} {
		r := &reconciler{
			kind:          kind,
			client:        mgr.GetClient(),
			apiReader:     mgr.GetAPIReader(),
			mapper:        mgr.GetRESTMapper(),
			dynamic:       dyn,
			cc:            cc,
			opts:          opts,
			interp:        opts.Interpreter,
			recorder:      mgr.GetEventRecorder("atoll-executor"),
			templates:     opts.Templates,
			templateLists: lists,
			watched:       newKnownSet(),
			namespaces:    newKnownSet(),
			reached:       newReachedClusters(),
			statusWrites:  newStatusWrites(opts.Clock, opts.StatusInterval),
			unresponsive:  newUnresponsive(opts.Clock),
			syncs:         newSyncCounters(kind.name()),
		}
		r.sweeper = newSweeper(r, opts.SweepPeriod, 30*time.Second)
		r.parked = newParked(ctx, 100*time.Millisecond, func(req reconcile.Request) { r.enqueue(req, true) },
			parkedBindings.WithLabelValues(kind.name()))
		// Override policy changes re-render the bindings they may affect.
		bldr := builder.ControllerManagedBy(mgr).
			Named("executor-"+kind.name()).
			For(kind.NewObject()).
			WithOptions(controller.Options{
				MaxConcurrentReconciles: kind.workers(opts),
				RateLimiter:             workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
				NeedLeaderElection:      opts.Shards.NeedLeaderElection(),
				NewQueue:                queue.NewQueue[reconcile.Request](mgr.GetLogger()),
			}).
			WatchesRawSource(shard.BindingSource(opts.Shards, mgr.GetCache(), kind.NewList)).
			// Member events go straight into the work queue, which
			// deduplicates and never drops (a bounded channel would).
			WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
				r.queue.Store(&q)
				return nil
			})).
			Watches(&policyv1alpha1.OverridePolicy{}, r.overrideHandler()).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, r.overrideHandler()).
			Watches(&clusterv1alpha1.Cluster{}, r.clusterHandler()).
			Watches(&configv1alpha1.ResourceInterpreterCustomization{}, r.customizationHandler())
		if kind == namespacedKind {
			bldr = bldr.Watches(&workv1alpha2.ResourceBinding{}, r.workloadHandler()).
				Watches(&tenancyv1alpha1.Tenant{}, r.tenantHandler())
		}
		err := bldr.Complete(shard.Reconciler(opts.Shards, shard.RequestKey, reconcile.Reconciler(r)))
		if err != nil {
			return fmt.Errorf("setting up the %s executor: %w", kind.name(), err)
		}
		if err := mgr.Add(r.sweeper); err != nil {
			return fmt.Errorf("setting up the %s sweep: %w", kind.name(), err)
		}
	}
	return nil
}

type reconciler struct {
	kind   kind
	client client.Client
	// syncs counts cluster syncs by outcome (clusterSyncs).
	syncs syncCounters
	// apiReader reads what the manager does not cache (control-plane
	// namespaces, once per member namespace created).
	apiReader client.Reader
	mapper    metaRESTMapper
	dynamic   dynamic.Interface
	cc        *clustercache.Cache
	opts      Options
	interp    *interpreter.Interpreter
	recorder  recorder.EventRecorder
	// queue is the controller's work queue, set when its sources start
	// (before any reconcile, so before any member informer exists).
	queue     atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
	templates *templatecache.Cache
	// templateLists fills templates with a list per resource on a miss.
	templateLists *templateLists
	// watched are the member GVRs (cluster/gvr) with an informer;
	// namespaces the member namespaces (cluster/namespace) known to exist.
	watched, namespaces *knownSet
	reached             *reachedClusters
	statusWrites        *statusWrites
	sweeper             *sweeper
	// unresponsive members are skipped for a while (see unresponsive).
	unresponsive *unresponsive
	// parked bindings wait for a member cache's first list or a list of
	// templates.
	parked *parked
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.kind.NewObject()
	// The cache's object, not a copy: after a restart every binding comes
	// through here, most park or find nothing to change. Whatever changes
	// the binding works on a copy (the finalizer below, writeStatus,
	// released, finalize).
	if err := r.client.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			r.templates.Forget(req.NamespacedName)
			r.reached.drop(req.NamespacedName)
			r.statusWrites.drop(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	_, spec, status := bindingkind.Parts(obj)
	// The scheduler's handed-over part waits while the binding is queued
	// here, and a Timeout from now once it is taken up.
	r.opts.Handoff.Seen(obj.GetUID(), obj.GetGeneration(), r.opts.Clock.Now())
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.finalize(ctx, obj, spec, status)
	}
	if reason := admission.OutOfRoom(obj.GetNamespace() != "", obj.GetNamespace(), spec, names.ReservedNamespaces()); reason != "" {
		// Refused at admission; one written while that check was off is
		// still never acted on.
		klog.FromContext(ctx).Info("Ignoring binding out of its room", "binding", klog.KObj(obj), "reason", reason)
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "OutOfRoom", "Propagate", "Not propagated: %s", reason)
		return reconcile.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		base := obj
		obj = obj.DeepCopyObject().(client.Object)
		controllerutil.AddFinalizer(obj, Finalizer)
		if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer to %s: %w", req, err)
		}
		_, spec, status = bindingkind.Parts(obj)
	}
	if _, released := obj.GetAnnotations()[workv1alpha2.ReleasedAnnotation]; released {
		return r.released(ctx, obj, status)
	}
	return r.sync(ctx, obj, spec, status)
}

// released records, once, that the binding's template is no longer claimed
// and touches nothing in the members: release is not withdrawal. The
// finalizer stays, so deleting the template still withdraws the objects.
func (r *reconciler) released(ctx context.Context, b client.Object, status *workv1alpha2.ResourceBindingStatus) (reconcile.Result, error) {
	newStatus := status.DeepCopy()
	meta.SetStatusCondition(&newStatus.Conditions, metav1.Condition{
		Type: workv1alpha2.Released, Status: metav1.ConditionTrue, Reason: "NoPolicyClaims", ObservedGeneration: b.GetGeneration(),
		Message: "No policy claims the template; its member objects are kept as they are and no longer synced",
	})
	retry, err := bindingkind.WriteStatus(ctx, r.client, b.DeepCopyObject().(client.Object), newStatus)
	return reconcile.Result{RequeueAfter: retry}, err
}
