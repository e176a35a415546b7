package dependencies

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/controller/workers"
	"github.com/atoll-dev/atoll/pkg/util/events"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// IndexRequiredBy (indexer.RequiredBy) indexes attached ResourceBindings by the names of the
// bindings in their spec.requiredBy (same namespace).
const IndexRequiredBy = indexer.RequiredBy

// conflictRetryDelay is how soon a reconcile that lost an optimistic-lock
// race runs again.
const conflictRetryDelay = 200 * time.Millisecond

// Options configure the controller.
type Options struct {
	// Workers is the number of concurrent reconciles (default
	// workers.Dependencies, Karmada's --concurrent-dependent-resource-syncs).
	Workers int
	// Interpreter lists a workload's dependencies. Default
	// interpreter.Native.
	Interpreter *interpreter.Interpreter
	// BindingFinalizer is set on the attached bindings it creates ("":
	// none; the executor's when it runs).
	BindingFinalizer string
	// Shards limits the controller to the requiring bindings of the
	// shards this process holds (nil: all, on the elected leader). An
	// attached binding that workloads of several shards require is written
	// by each of their processes, with optimistic concurrency.
	Shards *shard.Owner
	// TemplateInformers are the control plane's shared metadata informers
	// (the detector's, which already watch the dependency kinds; nil: the
	// controller's own).
	TemplateInformers *templatemeta.Informers
}

// Dependency is one object a workload needs (Karmada's
// DependentObjectReference).
type Dependency = interpreter.Dependency

// dependencyKinds are the watched dependency kinds (all core/v1).
var dependencyKinds = []string{interpreter.KindConfigMap, interpreter.KindSecret, interpreter.KindServiceAccount, interpreter.KindPersistentVolumeClaim}

// dependencyResources are the resources of dependencyKinds, watched for
// dependencies created, changed or deleted after their workload.
var dependencyResources = map[string]schema.GroupVersionResource{
	interpreter.KindConfigMap:             corev1.SchemeGroupVersion.WithResource("configmaps"),
	interpreter.KindSecret:                corev1.SchemeGroupVersion.WithResource("secrets"),
	interpreter.KindServiceAccount:        corev1.SchemeGroupVersion.WithResource("serviceaccounts"),
	interpreter.KindPersistentVolumeClaim: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
}

type depKey struct {
	Namespace, APIVersion, Kind, Name string
}

type parsed struct {
	uid     types.UID
	rv      string
	version string // of the interpreter that listed deps
	deps    []Dependency
}

type reconciler struct {
	client client.Client // bindings, from the manager's cache
	// objects are the metadata informers dependencies are read from;
	// held are those the reconciler acquired, kept until the manager
	// stops.
	objects *templatemeta.Informers
	heldMu  sync.Mutex
	held    map[schema.GroupVersionResource]heldInformer
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	newID   func() string
	interp  *interpreter.Interpreter
	// finalizer goes on created bindings (Options.BindingFinalizer).
	finalizer string
	recorder  recorder.EventRecorder
	// reported is the conflict last reported per attached binding (see
	// conflicted).
	reported sync.Map

	mu     sync.Mutex
	parsed map[types.NamespacedName]parsed
	wanted map[depKey]map[types.NamespacedName]bool
}

// Setup adds the controller to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Workers <= 0 {
		opts.Workers = workers.Dependencies
	}
	if opts.Interpreter == nil {
		opts.Interpreter = interpreter.Native
	}
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("dependencies: dynamic client: %w", err)
	}
	objects := opts.TemplateInformers
	if objects == nil {
		md, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
		if err != nil {
			return fmt.Errorf("dependencies: metadata client: %w", err)
		}
		objects = templatemeta.New(md, templatemeta.Options{})
	}
	r := &reconciler{
		client: mgr.GetClient(), objects: objects, held: map[schema.GroupVersionResource]heldInformer{}, dynamic: dyn, mapper: mgr.GetRESTMapper(), newID: uuid.NewString,
		interp: opts.Interpreter, finalizer: opts.BindingFinalizer, recorder: mgr.GetEventRecorder("atoll-dependencies"),
		parsed: map[types.NamespacedName]parsed{}, wanted: map[depKey]map[types.NamespacedName]bool{},
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("dependencies").
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.mapBinding),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, reachedChanged()))).
		Watches(&workv1alpha2.ResourceBinding{}, r.forgetDeleted()).
		WatchesRawSource(shard.BindingSource(opts.Shards, mgr.GetCache(), func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} })).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers, NeedLeaderElection: opts.Shards.NeedLeaderElection(),
			NewQueue: queue.NewQueue[reconcile.Request](mgr.GetLogger())})
	for _, kind := range dependencyKinds {
		b = b.WatchesRawSource(objects.Source(dependencyResources[kind], handler.TypedEnqueueRequestsFromMapFunc(r.mapDependency(kind))))
	}
	// Informers acquired for reads are given back when the manager stops.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.releaseInformers()
		return nil
	})); err != nil {
		return err
	}
	return b.Complete(shard.Reconciler(opts.Shards, shard.RequestKey, reconcile.Reconciler(r)))
}

type heldInformer struct {
	informer toolscache.SharedIndexInformer
	release  func()
}

// metadataOf reads the cached metadata of a dependency (nil when it does
// not exist). The object is the cache's: read it, never change it. Kinds
// other than the watched four (a customization may list any) get an
// informer on first use, as controller-runtime's cache starts one.
func (r *reconciler) metadataOf(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	r.heldMu.Lock()
	h, ok := r.held[mapping.Resource]
	if !ok {
		h.informer, h.release = r.objects.Acquire(mapping.Resource)
		r.held[mapping.Resource] = h
	}
	r.heldMu.Unlock()
	if !toolscache.WaitForCacheSync(ctx.Done(), h.informer.HasSynced) {
		return nil, fmt.Errorf("metadata of %s not synced: %w", mapping.Resource, context.Cause(ctx))
	}
	return templatemeta.Get(h.informer, namespace, name)
}

func (r *reconciler) releaseInformers() {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	for gvr, h := range r.held {
		h.release()
		delete(r.held, gvr)
	}
}

// isAttached reports whether b is an attached binding this controller
// manages: labelled so, and not claimed by a policy since (the detector then
// adopts the binding and the scheduler places it by the policy).
func isAttached(b client.Object) bool { return names.IsAttached(b.GetLabels()) }

// mapBinding: a binding reconciles itself, and a binding with requirers
// (attached, or a dependency's own binding that lists them) its requirers,
// so an attached binding changed or deleted by someone else is restored,
// and one its policy released (the detector deletes it) is attached again.
func (r *reconciler) mapBinding(_ context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*workv1alpha2.ResourceBinding)
	if !ok {
		return nil
	}
	out := make([]reconcile.Request, 0, len(b.Spec.RequiredBy)+1)
	if !isAttached(b) {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	}
	for _, s := range b.Spec.RequiredBy {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: s.Name}})
	}
	return out
}

// mapDependency maps a dependency object to the bindings that require it.
func (r *reconciler) mapDependency(kind string) func(context.Context, *metav1.PartialObjectMetadata) []reconcile.Request {
	return func(ctx context.Context, m *metav1.PartialObjectMetadata) []reconcile.Request {
		set := map[types.NamespacedName]bool{}
		r.mu.Lock()
		for k := range r.wanted[depKey{Namespace: m.Namespace, APIVersion: "v1", Kind: kind, Name: m.Name}] {
			set[k] = true
		}
		r.mu.Unlock()
		var b workv1alpha2.ResourceBinding
		key := types.NamespacedName{Namespace: m.Namespace, Name: names.BindingName(kind, m.Name)}
		if err := r.client.Get(ctx, key, &b, client.UnsafeDisableDeepCopy); err == nil && isAttached(&b) {
			for _, s := range b.Spec.RequiredBy {
				set[types.NamespacedName{Namespace: m.Namespace, Name: s.Name}] = true
			}
			if len(b.Spec.RequiredBy) == 0 {
				set[key] = true // a kept volume: its template may be gone now
			}
		}
		out := make([]reconcile.Request, 0, len(set))
		for k := range set {
			out = append(out, reconcile.Request{NamespacedName: k})
		}
		return out
	}
}

// Reconcile makes every attached binding list the requiring binding req
// exactly when the workload refers to its dependency.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var b workv1alpha2.ResourceBinding
	var deps []Dependency
	// Bindings are read from the cache without copies here (design 0013,
	// decision 33): every write goes through a copy (patch's updated,
	// recordInterpretation's status) or a new object.
	err := r.client.Get(ctx, req.NamespacedName, &b, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		b = workv1alpha2.ResourceBinding{}
	case err != nil:
		return reconcile.Result{}, err
	default:
		if isAttached(&b) && len(b.Spec.RequiredBy) == 0 {
			return reconcile.Result{}, r.pruneKept(ctx, &b)
		}
		deps, err = r.dependenciesOf(ctx, &b)
		if werr := r.recordInterpretation(ctx, &b, err); werr != nil {
			return reconcile.Result{}, werr
		}
		if _, failed := interpreter.AsError(err); failed {
			// The kind's script fails: nothing is attached or detached
			// until it works (retried a minute later).
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
	}
	r.remember(req.NamespacedName, deps)

	var errs []error
	keep := map[string]bool{}
	synced := false
	for _, d := range deps {
		wanted, wrote, err := r.attach(ctx, &b, d)
		if err != nil {
			errs = append(errs, err)
		}
		if wanted || err != nil {
			keep[names.BindingName(d.Kind, d.Name)] = true
		}
		synced = synced || wrote
	}
	if synced && len(errs) == 0 {
		// Karmada's events, only when an attached binding was written (a
		// restart writes none).
		r.recorder.Eventf(events.Template(&b.Spec), nil, corev1.EventTypeNormal, events.GetDependenciesSucceed, "GetDependencies",
			"Get dependencies(%s) succeed.", dependencyNames(deps))
		r.recorder.Eventf(&b, nil, corev1.EventTypeNormal, events.SyncScheduleResultToDependenciesSucceed, "Attach",
			"Sync schedule results to dependencies succeed.")
	}
	var attached workv1alpha2.ResourceBindingList
	if err := r.client.List(ctx, &attached, client.InNamespace(req.Namespace), client.MatchingFields{IndexRequiredBy: req.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing bindings required by %s: %w", req, err)
	}
	for i := range attached.Items {
		if a := &attached.Items[i]; !keep[a.Name] {
			if err := r.detach(ctx, a, req.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			klog.FromContext(ctx).V(2).Info("Attached binding changed meanwhile, retrying", "binding", req, "err", err)
			return reconcile.Result{RequeueAfter: conflictRetryDelay}, nil
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// dependenciesOf lists the dependencies of b's workload, nil when b does not
// propagate dependencies.
func (r *reconciler) dependenciesOf(ctx context.Context, b *workv1alpha2.ResourceBinding) ([]Dependency, error) {
	res := b.Spec.Resource
	if b.DeletionTimestamp != nil || !b.Spec.PropagateDeps || isAttached(b) {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return nil, nil // not a resource anyone can propagate
	}
	gvk := gv.WithKind(res.Kind)
	gk := gvk.GroupKind()
	if !r.interp.HasDependencies(ctx, gvk) {
		return nil, nil
	}
	key := client.ObjectKeyFromObject(b)
	r.mu.Lock()
	p, ok := r.parsed[key]
	r.mu.Unlock()
	version := r.interp.Version(ctx, gvk, interpreter.DependencyInterpretation)
	if ok && p.uid == res.UID && p.rv == res.ResourceVersion && p.rv != "" && p.version == version {
		return p.deps, nil
	}
	mapping, err := r.mapper.RESTMapping(gk, gv.Version)
	if err != nil {
		return nil, fmt.Errorf("binding %s: mapping %s: %w", key, gk, err)
	}
	templateReads.Inc()
	t, err := r.dynamic.Resource(mapping.Resource).Namespace(res.Namespace).Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // the detector deletes the binding
	}
	if err != nil {
		return nil, fmt.Errorf("binding %s: reading %s %s/%s: %w", key, res.Kind, res.Namespace, res.Name, err)
	}
	deps, err := r.interp.Dependencies(ctx, t)
	if err != nil {
		return nil, err
	}
	deps, err = sameNamespace(deps, res.Namespace)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.parsed[key] = parsed{uid: res.UID, rv: res.ResourceVersion, version: version, deps: deps}
	r.mu.Unlock()
	return deps, nil
}

// remember records what binding key requires, for mapDependency.
func (r *reconciler) remember(key types.NamespacedName, deps []Dependency) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, set := range r.wanted {
		if k.Namespace == key.Namespace && set[key] {
			delete(set, key)
			if len(set) == 0 {
				delete(r.wanted, k)
			}
		}
	}
	for _, d := range deps {
		k := depKey{Namespace: key.Namespace, APIVersion: d.APIVersion, Kind: d.Kind, Name: d.Name}
		if r.wanted[k] == nil {
			r.wanted[k] = map[types.NamespacedName]bool{}
		}
		r.wanted[k][key] = true
	}
	if len(deps) == 0 {
		delete(r.parsed, key)
	}
}

// attach makes the attached binding of dependency d list b. It reports
// whether b keeps requiring that binding (false when the dependency does
// not exist in the control plane).
func (r *reconciler) attach(ctx context.Context, b *workv1alpha2.ResourceBinding, d Dependency) (wanted, wrote bool, err error) {
	gv, err := schema.ParseGroupVersion(d.APIVersion)
	if err != nil {
		return false, false, fmt.Errorf("dependency %s %s: apiVersion: %w", d.Kind, d.Name, err)
	}
	obj, err := r.metadataOf(ctx, gv.WithKind(d.Kind), b.Namespace, d.Name)
	if err != nil {
		return true, false, fmt.Errorf("reading %s %s/%s: %w", d.Kind, b.Namespace, d.Name, err)
	}
	if obj == nil {
		return false, false, nil
	}
	ref := workv1alpha2.ObjectReference{APIVersion: d.APIVersion, Kind: d.Kind, Namespace: b.Namespace, Name: d.Name,
		UID: obj.UID, ResourceVersion: obj.ResourceVersion}
	key := types.NamespacedName{Namespace: b.Namespace, Name: names.BindingName(d.Kind, d.Name)}
	snap := snapshotOf(b)

	var existing workv1alpha2.ResourceBinding
	err = r.client.Get(ctx, key, &existing, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		a := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{workv1alpha2.AttachedLabel: "true", workv1alpha2.ResourceBindingPermanentIDLabel: r.newID()},
		}}
		if r.finalizer != "" {
			a.Finalizers = []string{r.finalizer}
		}
		a.Spec.Resource = ref
		a.Spec.RequiredBy = []workv1alpha2.BindingSnapshot{snap}
		conflicts, err := r.complete(ctx, &a.Spec, b)
		if err != nil {
			return true, false, err
		}
		if err := r.client.Create(ctx, a, client.FieldOwner(names.FieldManager)); err != nil {
			return true, false, fmt.Errorf("creating attached binding %s: %w", key, err)
		}
		attachedWritten.WithLabelValues("create").Inc()
		klog.FromContext(ctx).V(1).Info("Attached binding created", "binding", key, "requiredBy", klog.KObj(b))
		r.conflicted(a, conflicts, true)
		return true, true, nil
	}
	if err != nil {
		return true, false, fmt.Errorf("reading binding %s: %w", key, err)
	}
	if !isAttached(&existing) || existing.DeletionTimestamp != nil {
		// Claimed by its own policy (or someone else's), or on its way
		// out: its deletion event brings b back here.
		return true, false, nil
	}
	updated := existing.DeepCopy()
	updated.Spec.Resource = ref
	updated.Spec.RequiredBy = upsert(updated.Spec.RequiredBy, snap)
	conflicts, err := r.complete(ctx, &updated.Spec, b)
	if err != nil {
		return true, false, err
	}
	wrote, err = r.patch(ctx, &existing, updated)
	if err == nil {
		r.conflicted(&existing, conflicts, wrote)
	}
	return true, wrote, err
}

// detach removes requirer from attached binding a, deleting a when no
// requirer is left.
func (r *reconciler) detach(ctx context.Context, a *workv1alpha2.ResourceBinding, requirer string) error {
	if a.DeletionTimestamp != nil {
		return nil
	}
	updated := a.DeepCopy()
	updated.Spec.RequiredBy = nil
	for _, s := range a.Spec.RequiredBy {
		if s.Name != requirer {
			updated.Spec.RequiredBy = append(updated.Spec.RequiredBy, s)
		}
	}
	if len(updated.Spec.RequiredBy) == 0 {
		kept, err := r.keepsData(ctx, a)
		if err != nil {
			return err
		}
		if kept {
			// Required by nothing, but it holds data: the binding stays (and
			// with it the member copies, which the executor keeps, and the
			// permanent id that lets a re-created workload find them again)
			// until its own template is deleted.
			updated.Spec.Clusters = nil
			_, err := r.patch(ctx, a, updated)
			return err
		}
		uid, rv := a.UID, a.ResourceVersion
		err = r.client.Delete(ctx, a, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting attached binding %s: %w", klog.KObj(a), err)
		}
		attachedWritten.WithLabelValues("delete").Inc()
		r.reported.Delete(client.ObjectKeyFromObject(a))
		klog.FromContext(ctx).V(1).Info("Attached binding deleted", "binding", klog.KObj(a))
		return nil
	}
	conflicts, err := r.complete(ctx, &updated.Spec, nil)
	if err != nil {
		return err
	}
	wrote, err := r.patch(ctx, a, updated)
	if err == nil {
		r.conflicted(a, conflicts, wrote)
	}
	return err
}

// keepsData reports whether attached binding a must outlive its last
// requirer: its kind holds data and its template still exists.
func (r *reconciler) keepsData(ctx context.Context, a *workv1alpha2.ResourceBinding) (bool, error) {
	res := a.Spec.Resource
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil || !interpreter.HoldsData(gv.WithKind(res.Kind).GroupKind()) {
		return false, nil
	}
	obj, err := r.metadataOf(ctx, gv.WithKind(res.Kind), res.Namespace, res.Name)
	if err != nil {
		return false, fmt.Errorf("reading %s %s/%s: %w", res.Kind, res.Namespace, res.Name, err)
	}
	if obj == nil {
		return false, nil
	}
	// A template being deleted (a PVC waits for its protection finalizer)
	// counts as deleted: the user asked for it to go.
	return obj.DeletionTimestamp == nil && (res.UID == "" || obj.UID == res.UID), nil
}

// pruneKept deletes an attached binding required by nothing once it no
// longer keeps data (its template is gone); the executor then withdraws the
// member copies.
func (r *reconciler) pruneKept(ctx context.Context, a *workv1alpha2.ResourceBinding) error {
	if a.DeletionTimestamp != nil {
		return nil
	}
	if kept, err := r.keepsData(ctx, a); err != nil || kept {
		return err
	}
	uid, rv := a.UID, a.ResourceVersion
	if err := r.client.Delete(ctx, a, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting attached binding %s: %w", klog.KObj(a), err)
	}
	attachedWritten.WithLabelValues("delete").Inc()
	klog.FromContext(ctx).V(1).Info("Kept attached binding deleted with its template", "binding", klog.KObj(a))
	return nil
}

func (r *reconciler) patch(ctx context.Context, existing, updated *workv1alpha2.ResourceBinding) (wrote bool, err error) {
	if semantic.Equal(existing.Spec, updated.Spec) {
		return false, nil
	}
	p := client.MergeFromWithOptions(existing, client.MergeFromWithOptimisticLock{})
	if err := r.client.Patch(ctx, updated, p, client.FieldOwner(names.FieldManager)); err != nil {
		return false, fmt.Errorf("updating attached binding %s: %w", klog.KObj(existing), err)
	}
	attachedWritten.WithLabelValues("update").Inc()
	klog.FromContext(ctx).V(1).Info("Attached binding updated", "binding", klog.KObj(existing), "clusters", len(updated.Spec.Clusters))
	return true, nil
}

// complete derives the rest of an attached binding's spec from requiredBy:
// clusters is the union of the requirers' clusters (zero replicas);
// conflictResolution is Overwrite when any requirer's is, and
// preserveResourcesOnDeletion true when any requirer's is (Karmada's rule;
// self, when given, is read instead of the cache). It returns the
// conflicts found between requirers, in Karmada's words, for an event.
func (r *reconciler) complete(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, self *workv1alpha2.ResourceBinding) ([]string, error) {
	spec.Clusters = clustersOf(spec.RequiredBy)
	if len(spec.RequiredBy) == 0 {
		return nil, nil
	}
	var overwrite, abort, preserve, discard, seen bool
	for _, s := range spec.RequiredBy {
		rb := self
		if self == nil || self.Name != s.Name {
			var b workv1alpha2.ResourceBinding
			err := r.client.Get(ctx, types.NamespacedName{Namespace: spec.Resource.Namespace, Name: s.Name}, &b, client.UnsafeDisableDeepCopy)
			if apierrors.IsNotFound(err) {
				continue // its own reconcile removes it
			}
			if err != nil {
				return nil, err
			}
			rb = &b
		}
		seen = true
		if rb.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
			overwrite = true
		} else {
			abort = true
		}
		if rb.Spec.PreserveResourcesOnDeletion != nil && *rb.Spec.PreserveResourcesOnDeletion {
			preserve = true
		} else {
			discard = true
		}
	}
	if !seen {
		return nil, nil
	}
	spec.ConflictResolution = policyv1alpha1.ConflictAbort
	if overwrite {
		spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	}
	spec.PreserveResourcesOnDeletion = &preserve
	var conflicts []string
	if overwrite && abort {
		conflicts = append(conflicts, "ConflictResolution conflicted (Overwrite vs Abort)")
	}
	if preserve && discard {
		conflicts = append(conflicts, "PreserveResourcesOnDeletion conflicted (true vs false)")
	}
	return conflicts, nil
}

// forgetDeleted drops the conflict noted for an attached binding once it
// is deleted by anyone (its template's deletion, a user), so the notes do
// not outlive their bindings. It enqueues nothing.
func (r *reconciler) forgetDeleted() handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		r.reported.Delete(client.ObjectKeyFromObject(e.Object))
	}}
}

// conflicted records Karmada's DependencyPolicyConflict on attached binding
// a when its requirers conflict: after a write that resolved them, or when
// the conflict differs from the one last reported (a requirer changed its
// settings without changing the resolution: Overwrite+true and
// Overwrite+false still resolve to Overwrite+true). The first look at a
// binding after a start only notes its conflict, so a restart records no
// events.
func (r *reconciler) conflicted(a *workv1alpha2.ResourceBinding, conflicts []string, wrote bool) {
	msg := strings.Join(conflicts, "; ")
	prev, seen := r.reported.Swap(client.ObjectKeyFromObject(a), msg)
	if msg != "" && (wrote || seen && prev != msg) {
		r.recorder.Eventf(a, nil, corev1.EventTypeWarning, events.DependencyPolicyConflict, "Attach",
			"Dependency policy conflict detected: %s.", msg)
	}
}

// snapshotOf is b as a requirer: its name and the names of its clusters
// (replicas are left out so rescaling a workload does not rewrite its
// dependencies' bindings). Clusters where a graceful eviction task keeps
// b's old copy count too, and so do clusters its status still lists (the
// copy there is not withdrawn yet): a workload's ConfigMaps and Secrets
// leave a cluster only after the workload itself is gone from it.
func snapshotOf(b *workv1alpha2.ResourceBinding) workv1alpha2.BindingSnapshot {
	s := workv1alpha2.BindingSnapshot{Namespace: b.Namespace, Name: b.Name}
	add := func(name string) {
		if !slices.ContainsFunc(s.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == name }) {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: name})
		}
	}
	for _, c := range b.Spec.Clusters {
		add(c.Name)
	}
	for i := range b.Spec.GracefulEvictionTasks {
		if t := &b.Spec.GracefulEvictionTasks[i]; eviction.Holds(t) {
			add(t.FromCluster)
		}
	}
	for _, item := range b.Status.AggregatedStatus {
		add(item.ClusterName)
	}
	sort.Slice(s.Clusters, func(i, j int) bool { return s.Clusters[i].Name < s.Clusters[j].Name })
	return s
}

// upsert puts s into list, sorted by namespace and name.
func upsert(list []workv1alpha2.BindingSnapshot, s workv1alpha2.BindingSnapshot) []workv1alpha2.BindingSnapshot {
	out := make([]workv1alpha2.BindingSnapshot, 0, len(list)+1)
	for _, x := range list {
		if x.Namespace != s.Namespace || x.Name != s.Name {
			out = append(out, x)
		}
	}
	out = append(out, s)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// clustersOf is the union of the requirers' clusters, sorted by name.
func clustersOf(list []workv1alpha2.BindingSnapshot) []workv1alpha2.TargetCluster {
	set := map[string]bool{}
	for _, s := range list {
		for _, c := range s.Clusters {
			set[c.Name] = true
		}
	}
	out := make([]workv1alpha2.TargetCluster, 0, len(set))
	for n := range set {
		out = append(out, workv1alpha2.TargetCluster{Name: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil
	}
	return out
}

// reachedChanged passes binding updates that change the set of clusters the
// status lists: a workload's withdrawal from a cluster completing lets its
// dependencies leave that cluster.
func reachedChanged() predicate.Funcs {
	names := func(o client.Object) []string {
		b, ok := o.(*workv1alpha2.ResourceBinding)
		if !ok {
			return nil
		}
		out := make([]string, 0, len(b.Status.AggregatedStatus))
		for _, item := range b.Status.AggregatedStatus {
			out = append(out, item.ClusterName)
		}
		sort.Strings(out)
		return out
	}
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !slices.Equal(names(e.ObjectOld), names(e.ObjectNew))
		},
	}
}

// sameNamespace keeps the named dependencies in the workload's namespace
// (an empty namespace means it). A dependency selected by label, or in
// another namespace, is refused with an error naming it: an attached
// binding lives in its workload's namespace, and a workload may not pull
// another namespace's objects into its clusters.
func sameNamespace(deps []Dependency, ns string) ([]Dependency, error) {
	out := make([]Dependency, 0, len(deps))
	for _, d := range deps {
		switch {
		case d.LabelSelector != nil:
			return nil, fmt.Errorf("dependency %s selected by labelSelector: only dependencies named by name are supported", d.Kind)
		case d.Namespace != "" && d.Namespace != ns:
			return nil, fmt.Errorf("dependency %s %s/%s: not in the workload's namespace %s", d.Kind, d.Namespace, d.Name, ns)
		}
		d.Namespace = ""
		out = append(out, d)
	}
	return out, nil
}

// recordInterpretation makes b's Interpreted condition say whether its
// dependencyInterpretation script failed (err).
func (r *reconciler) recordInterpretation(ctx context.Context, b *workv1alpha2.ResourceBinding, err error) error {
	want := b.Status.DeepCopy()
	if !interpreter.RecordFailure(&want.Conditions, b.Generation, err, interpreter.DependencyInterpretation) {
		return nil
	}
	retry, werr := bindingkind.WriteStatus(ctx, r.client, b.DeepCopy(), want)
	if werr == nil && retry > 0 {
		werr = fmt.Errorf("binding %s changed while its Interpreted condition was written; retrying", klog.KObj(b))
	}
	return werr
}

// dependencyNames lists dependencies as Kind/name for an event.
func dependencyNames(deps []Dependency) string {
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = d.Kind + "/" + d.Name
	}
	return strings.Join(out, ", ")
}
