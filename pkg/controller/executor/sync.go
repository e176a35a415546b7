package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// clusterResult is the outcome of one cluster's sync.
type clusterResult struct {
	item workv1alpha2.AggregatedStatusItem
	// current: the member runs the manifest of the current template.
	current bool
	// reflected is the member object's reflected status, for aggregation.
	reflected map[string]any
	err       error
	// interpretErr is a customization script failing for this cluster.
	interpretErr error
}

// interpretationFailed: the kind's script failed, so nothing is applied;
// the binding's Interpreted condition names the script.
func (res clusterResult) interpretationFailed(err error) clusterResult {
	res.interpretErr = err
	res.item.AppliedMessage = truncate(err.Error(), maxItemMessage)
	return res
}

func (r *reconciler) sync(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) (reconcile.Result, error) {
	key := client.ObjectKeyFromObject(b)
	template, gvr, err := r.template(ctx, key, spec)
	if apierrors.IsNotFound(err) {
		// The detector removes bindings of deleted templates.
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	gvk := gvr.GroupVersion().WithKind(template.GetKind())
	gk := gvk.GroupKind()
	hasReplicas := r.interp.HasReplicas(ctx, gvk)

	targets := map[string]int32{}
	for _, t := range spec.Clusters {
		targets[t.Name] = t.Replicas
	}
	suspended := spec.Suspension != nil && ptrTrue(spec.Suspension.Dispatching)
	overrides, err := r.overridePolicies(ctx, template.GetNamespace())
	if err != nil {
		return reconcile.Result{}, err
	}

	results := make([]clusterResult, len(spec.Clusters))
	var wg sync.WaitGroup
	var retry time.Duration // soonest retry of a member skipped as unresponsive
	unavailable := func(cluster string) string {
		if why := r.notReady(ctx, cluster); why != "" {
			return why
		}
		why, left := r.unresponsive.skip(cluster)
		if why != "" && (retry == 0 || left < retry) {
			retry = left
		}
		return why
	}
	for i, t := range spec.Clusters {
		if why := unavailable(t.Name); why != "" {
			// One dead member must not hold every binding placed on it for a
			// request timeout: it is not called until it is Ready again (the
			// Ready transition re-runs this binding).
			results[i] = clusterResult{item: workv1alpha2.AggregatedStatusItem{ClusterName: t.Name, Health: workv1alpha2.ResourceUnknown, AppliedMessage: why}}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var replicas *int64
			if hasReplicas && spec.Replicas > 0 {
				n := int64(t.Replicas)
				replicas = &n
			}
			results[i] = r.syncCluster(ctx, b, spec, t.Name, template, replicas, suspended || suspendedOn(spec, t.Name), overrides)
		}()
	}
	wg.Wait()

	// Withdraw from clusters that left the placement: those the status lists
	// and those applied to since (the status write may lag behind, or have
	// lost a race, when the placement changes again).
	for _, res := range results {
		if res.item.Applied || res.reflected != nil {
			r.members.remember(key, res.item.ClusterName)
		}
	}
	var errs []error
	kept := map[string]string{} // cluster: why its copy stays
	held := heldClusters(spec)
	for _, cluster := range r.members.reached(key, status) {
		if _, ok := targets[cluster]; ok {
			continue
		}
		if held[cluster] {
			// A graceful eviction task keeps the old copy, untouched, until
			// the scheduler ends the task.
			kept[cluster] = "kept by a graceful eviction task"
			continue
		}
		if suspended || suspendedOn(spec, cluster) {
			// Suspended dispatching stops deletions as well as applies.
			kept[cluster] = "dispatching is suspended; withdrawal waits"
			continue
		}
		if why := unavailable(cluster); why != "" {
			kept[cluster] = "withdrawal pending: " + why
			continue
		}
		if keepsData(b, gk) {
			// A volume that followed its workload stays when the workload
			// moves or goes: only deleting its template removes it.
			kept[cluster] = fmt.Sprintf("kept: a %s holds data; it is removed from members only when its template is deleted", gk.Kind)
			continue
		}
		if err := r.withdraw(ctx, b, spec, cluster, template); err != nil {
			r.unresponsive.observe(cluster, err)
			errs = append(errs, err)
			kept[cluster] = "withdrawal pending" // keep tracking it until gone
			continue
		}
		r.members.forget(key, cluster)
	}

	newStatus := status.DeepCopy()
	newStatus.AggregatedStatus = nil
	allApplied, allCurrent := len(results) > 0, true
	var reflected []workv1alpha2.AggregatedStatusItem
	var failed, reasons []string
	var interpretErr error
	for _, res := range results {
		newStatus.AggregatedStatus = append(newStatus.AggregatedStatus, res.item)
		if res.err != nil {
			errs = append(errs, res.err)
		}
		if res.interpretErr != nil && interpretErr == nil {
			interpretErr = res.interpretErr
		}
		if !res.item.Applied {
			allApplied = false
			failed = append(failed, res.item.ClusterName)
			if res.item.AppliedMessage != "" {
				reasons = append(reasons, res.item.AppliedMessage)
			}
		}
		allCurrent = allCurrent && res.current
		if res.reflected != nil {
			// Aggregation sees the whole reflected status, even one too
			// large for the binding.
			item := res.item
			if data, err := json.Marshal(res.reflected); err == nil {
				item.Status = &runtime.RawExtension{Raw: data}
			}
			reflected = append(reflected, item)
		}
	}
	for _, item := range status.AggregatedStatus {
		if msg, ok := kept[item.ClusterName]; ok {
			if item.Applied || item.Status != nil {
				// The last status seen while it was synced, now saying why it
				// stays.
				item.AppliedMessage = msg
			}
			newStatus.AggregatedStatus = append(newStatus.AggregatedStatus, item)
			delete(kept, item.ClusterName)
		}
	}
	for cluster, msg := range kept { // reached, withdrawal failed or held, not yet in status
		newStatus.AggregatedStatus = append(newStatus.AggregatedStatus,
			workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown, AppliedMessage: msg})
	}
	sort.Slice(newStatus.AggregatedStatus, func(i, j int) bool {
		return newStatus.AggregatedStatus[i].ClusterName < newStatus.AggregatedStatus[j].ClusterName
	})
	cond := metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, Reason: "FullyAppliedSuccess",
		Message: "All works have been successfully applied", ObservedGeneration: b.GetGeneration()}
	switch {
	case len(spec.Clusters) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NoClusters", "The binding is not scheduled to any cluster"
	case !allApplied:
		cond.Status, cond.Reason = metav1.ConditionFalse, "FullyAppliedFailed"
		cond.Message = fmt.Sprintf("Failed to apply to cluster(s) %v", failed)
		if len(reasons) > 0 {
			cond.Message = truncate(cond.Message+": "+strings.Join(reasons, "; "), maxConditionMessage)
		}
	}
	meta.SetStatusCondition(&newStatus.Conditions, cond)
	meta.RemoveStatusCondition(&newStatus.Conditions, workv1alpha2.Released)

	// The template's status is aggregated before the binding's is written,
	// so that a failing aggregation script shows in the same write.
	aggErr := r.aggregateTemplateStatus(ctx, key, spec.Resource.ResourceVersion, template, gvr, reflected, allCurrent && allApplied && !suspended)
	if _, ok := interpreter.AsError(aggErr); ok {
		if interpretErr == nil {
			interpretErr = aggErr
		}
	} else if aggErr != nil {
		errs = append(errs, aggErr)
	}
	interpreter.RecordFailure(&newStatus.Conditions, b.GetGeneration(), interpretErr, executorOperations...)

	result := reconcile.Result{RequeueAfter: retry}
	if !equality.Semantic.DeepEqual(status, newStatus) {
		wait, err := r.writeStatus(ctx, b, newStatus)
		if err != nil {
			errs = append(errs, err)
		}
		if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
			result.RequeueAfter = wait
		}
	}
	if len(errs) > 0 {
		return result, fmt.Errorf("binding %s: %v", key, errs)
	}
	return result, nil
}

// template returns the binding's template, from the cache when the binding
// still records the same template resourceVersion.
func (r *reconciler) template(ctx context.Context, key types.NamespacedName, spec *workv1alpha2.ResourceBindingSpec) (*unstructured.Unstructured, schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(spec.Resource.APIVersion)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("binding %s: resource.apiVersion: %w", key, err)
	}
	mapping, err := r.mapper.RESTMapping(gv.WithKind(spec.Resource.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("binding %s: mapping %s: %w", key, spec.Resource.Kind, err)
	}
	gvr := mapping.Resource
	if t, ok := r.templates.get(key, spec.Resource.ResourceVersion); ok {
		return t, gvr, nil
	}
	t, err := r.dynamic.Resource(gvr).Namespace(spec.Resource.Namespace).Get(ctx, spec.Resource.Name, metav1.GetOptions{})
	if err != nil {
		return nil, gvr, err
	}
	r.templates.put(key, spec.Resource.ResourceVersion, t)
	return t, gvr, nil
}

// syncCluster makes the member object of one cluster match the template
// with the cluster's overrides applied.
func (r *reconciler) syncCluster(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string,
	template *unstructured.Unstructured, replicas *int64, suspended bool, overrides *overridePolicies) clusterResult {
	res := clusterResult{item: workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown}}
	fail := func(err error) clusterResult {
		r.unresponsive.observe(cluster, err)
		res.item.Applied, res.item.AppliedMessage, res.err = false, truncate(err.Error(), maxItemMessage), err
		return res
	}
	member, err := r.cc.Member(ctx, cluster)
	if err != nil {
		return fail(fmt.Errorf("cluster %s: %w", cluster, err))
	}
	desired, err := r.interp.Render(ctx, template, replicas)
	if err != nil {
		return res.interpretationFailed(err)
	}
	gvk := desired.GroupVersionKind()
	mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fail(fmt.Errorf("cluster %s does not serve %s: %w", cluster, gvk, err))
	}
	lister, err := r.watch(member, mapping.Resource)
	if err != nil {
		return fail(err)
	}
	if !waitSynced(ctx, member, mapping.Resource) {
		return fail(fmt.Errorf("cluster %s: %s: %w", cluster, mapping.Resource.Resource, errNotSynced))
	}
	// Overrides apply to the rendered manifest, before atoll's own metadata
	// (so no override can detach the object from its binding) and before
	// hashing (so a policy change rewrites exactly the objects it changes).
	desired, err = r.override(ctx, desired, cluster, overrides)
	if err != nil {
		// A policy that cannot apply is the user's to fix; its change
		// enqueues the binding again, so there is no retry here. The member
		// object is left as it is.
		r.overrideFailed(b, cluster, err)
		res.item.AppliedMessage = truncate(err.Error(), maxItemMessage)
		if live := getLive(lister, template.GetNamespace(), template.GetName()); live != nil && r.ownedBy(b, live) {
			r.observe(ctx, &res, live)
		}
		return res
	}
	live := getLive(lister, desired.GetNamespace(), desired.GetName())
	if live != nil && !r.ownedBy(b, live) {
		// The managed label alone proves nothing (anyone can set it): an
		// object without this binding's ownership record is someone else's,
		// and goes through conflict resolution like any other.
		live = nil
	}
	tookOver := ""
	if live != nil && live.GetAnnotations()[TookOverAnnotation] == "true" {
		tookOver = tookOverMessage(desired, cluster)
	} else if live == nil && !suspended {
		msg, blocked, err := r.conflict(ctx, member, mapping.Resource, b, desired, conflictResolution(template, spec.ConflictResolution))
		if err != nil {
			return fail(err)
		}
		if blocked {
			res.item.AppliedMessage = msg
			return res
		}
		tookOver = msg
	}
	labels, annotations := ownerMetadata(r.kind, b)
	if tookOver != "" {
		annotations[TookOverAnnotation] = "true"
	}
	desired.SetLabels(merge(desired.GetLabels(), labels))
	if spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion {
		annotations[names.PreserveOnDeleteAnnotation] = "true"
	}
	desired.SetAnnotations(merge(desired.GetAnnotations(), annotations))
	hash, err := interpreter.Hash(desired)
	if err != nil {
		return fail(err)
	}
	desired.SetAnnotations(merge(desired.GetAnnotations(), map[string]string{names.ManifestHashAnnotation: hash}))

	res.current = live != nil && live.GetAnnotations()[names.ManifestHashAnnotation] == hash
	if live != nil {
		r.observe(ctx, &res, live)
	}
	// What the member owns (replicas a member HPA scales, a Job's immutable
	// completions, a script's retained fields) is kept after hashing and
	// before the drift check, so that the member's own changes are neither
	// drift nor a reason to write.
	if desired, err = r.interp.Retain(ctx, template, desired, live, replicas); err != nil {
		return res.interpretationFailed(err)
	}
	if live != nil && res.current {
		if drifted, path := interpreter.Drifted(desired, live); !drifted {
			res.item.Applied, res.item.AppliedMessage = true, tookOver
			return res
		} else {
			klog.FromContext(ctx).V(1).Info("Member object drifted", "cluster", cluster, "object", klog.KObj(desired), "field", path)
		}
	}
	if suspended {
		res.item.Applied, res.item.AppliedMessage = live != nil && res.current, "dispatching is suspended"
		return res
	}
	if err := r.ensureNamespace(ctx, member, cluster, desired.GetNamespace()); err != nil {
		return fail(err)
	}
	force := true
	applied, err := member.Dynamic.Resource(mapping.Resource).Namespace(desired.GetNamespace()).Apply(ctx, desired.GetName(), desired,
		metav1.ApplyOptions{FieldManager: names.FieldManager, Force: force})
	if apierrors.IsNotFound(err) && desired.GetNamespace() != "" {
		// The namespace was deleted in the member since atoll saw it: the
		// retry creates it again.
		r.members.unmark(r.members.namespaces, namespaceKey(member, desired.GetNamespace()))
	}
	if err != nil {
		return fail(fmt.Errorf("applying %s %s to cluster %s: %w", gvk.Kind, klog.KObj(desired), cluster, err))
	}
	r.unresponsive.clear(cluster)
	if tookOver != "" && live == nil {
		r.recorder.Eventf(b, corev1.EventTypeNormal, "TookOver", "%s", tookOver)
	}
	res.item.Applied, res.item.AppliedMessage = true, tookOver
	res.current = true
	r.observe(ctx, &res, applied)
	return res
}

// observe records a member object's health and reflected status in res.
func (r *reconciler) observe(ctx context.Context, res *clusterResult, live *unstructured.Unstructured) {
	health, err := r.interp.Health(ctx, live)
	if err != nil {
		res.interpretErr = err
	}
	res.item.Health = health
	reflected, err := r.interp.ReflectStatus(ctx, live)
	if err != nil {
		res.interpretErr = err
		return
	}
	res.reflected = reflected
	res.item.Status = rawStatus(reflected)
}

// executorOperations are the interpreter operations the executor runs; it
// clears only the Interpreted conditions they left.
var executorOperations = []interpreter.Operation{
	interpreter.ReplicaRevision, interpreter.Retention, interpreter.StatusReflection,
	interpreter.HealthInterpretation, interpreter.StatusAggregation,
}

// TookOverAnnotation marks a member object that existed before atoll took
// it over (conflictResolution Overwrite), so the binding status keeps
// saying so and letting go hands it back.
const TookOverAnnotation = names.TookOverAnnotation

func tookOverMessage(desired *unstructured.Unstructured, cluster string) string {
	return fmt.Sprintf("took over existing %s %s in cluster %s", desired.GetKind(), klog.KObj(desired), cluster)
}

// ConflictResolutionAnnotation on a resource template (Karmada's) overrides
// the policy's conflictResolution for that template: "overwrite" or
// "abort".
const ConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"

// conflictResolution is the template's annotation when it says overwrite or
// abort, else the binding's (policy's) conflictResolution.
func conflictResolution(template *unstructured.Unstructured, fromPolicy policyv1alpha1.ConflictResolution) policyv1alpha1.ConflictResolution {
	switch strings.ToLower(template.GetAnnotations()[ConflictResolutionAnnotation]) {
	case "overwrite":
		return policyv1alpha1.ConflictOverwrite
	case "abort":
		return policyv1alpha1.ConflictAbort
	}
	return fromPolicy
}

// conflict checks, before atoll first writes an object into a member,
// whether an object of that name already exists there that atoll does not
// manage. With conflictResolution Abort (the default) atoll leaves it alone
// (blocked, with a message); with Overwrite it takes it over and the
// message says so.
func (r *reconciler) conflict(ctx context.Context, member *clustercache.Member, gvr schema.GroupVersionResource, b client.Object,
	desired *unstructured.Unstructured, resolution policyv1alpha1.ConflictResolution) (string, bool, error) {
	existing, err := member.Dynamic.Resource(gvr).Namespace(desired.GetNamespace()).Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cluster %s: checking for an existing %s: %w", member.Name, klog.KObj(desired), err)
	}
	if r.ownedBy(b, existing) {
		return "", false, nil // ours; the cache had not seen it yet
	}
	if resolution == policyv1alpha1.ConflictOverwrite {
		return tookOverMessage(desired, member.Name), false, nil
	}
	return fmt.Sprintf("%s %s already exists in cluster %s and is not managed by atoll; conflictResolution is Abort",
		desired.GetKind(), klog.KObj(desired), member.Name), true, nil
}

// ensureNamespace creates a namespace in a member the first time something
// is propagated into it.
func (r *reconciler) ensureNamespace(ctx context.Context, member *clustercache.Member, cluster, ns string) error {
	if ns == "" {
		return nil
	}
	key := namespaceKey(member, ns)
	if !r.members.mark(r.members.namespaces, key) {
		return nil
	}
	_, err := member.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = member.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{FieldManager: names.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		r.members.unmark(r.members.namespaces, key)
		return fmt.Errorf("cluster %s: ensuring namespace %s: %w", cluster, ns, err)
	}
	return nil
}

func namespaceKey(member *clustercache.Member, ns string) string {
	return fmt.Sprintf("%p/%s", member, ns)
}

// watch makes sure the member's objects of gvr are watched, with events
// mapped back to their binding.
func (r *reconciler) watch(member *clustercache.Member, gvr schema.GroupVersionResource) (cache.GenericLister, error) {
	key := fmt.Sprintf("%p/%s", member, gvr)
	if !r.members.mark(r.members.watched, key) {
		return member.Watch(gvr, nil)
	}
	cluster := member.Name
	lister, err := member.Watch(gvr, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.memberEvent(cluster, obj, true) },
		UpdateFunc: func(_, obj any) { r.memberEvent(cluster, obj, true) },
		DeleteFunc: func(obj any) { r.memberEvent(cluster, obj, false) },
	})
	if err != nil {
		r.members.unmark(r.members.watched, key)
		return nil, fmt.Errorf("cluster %s: watching %s: %w", member.Name, gvr.Resource, err)
	}
	return lister, nil
}

// memberEvent enqueues the binding a member object names. An object that
// exists is also remembered as possibly the binding's in that cluster, so a
// copy the binding status never recorded (a crash between apply and status
// write) is still withdrawn when the placement leaves the cluster; the
// withdrawal itself checks the exact ownership record.
func (r *reconciler) memberEvent(cluster string, obj any, exists bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key, ok := r.kind.owns(m.GetAnnotations())
	if !ok {
		return
	}
	if exists {
		r.members.remember(key, cluster)
	}
	if q := r.queue.Load(); q != nil {
		(*q).Add(reconcile.Request{NamespacedName: key})
	}
}

// heldClusters are the clusters whose copy a graceful eviction task keeps
// (purge mode Gracefully or Never, or suppressDeletion).
func heldClusters(spec *workv1alpha2.ResourceBindingSpec) map[string]bool {
	held := map[string]bool{}
	for i := range spec.GracefulEvictionTasks {
		if eviction.Holds(&spec.GracefulEvictionTasks[i]) {
			held[spec.GracefulEvictionTasks[i].FromCluster] = true
		}
	}
	return held
}

// withdraw removes the binding's object from a cluster it left. Only an
// object that carries this binding's ownership record is touched. One that
// atoll took over from someone else (conflictResolution Overwrite), or that
// the binding preserves on deletion, is handed back: atoll's marks are
// removed and the object stays.
func (r *reconciler) withdraw(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string, template *unstructured.Unstructured) error {
	return r.withdrawOrHandBack(ctx, b, spec, cluster, template, false)
}

// withdrawOrHandBack is withdraw, handing the object back instead of
// deleting it when handBack is set.
func (r *reconciler) withdrawOrHandBack(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string,
	template *unstructured.Unstructured, handBack bool) error {
	member, err := r.cc.Member(ctx, cluster)
	if apierrors.IsNotFound(err) {
		return nil // the cluster itself is gone
	}
	if err != nil {
		return fmt.Errorf("withdrawing from cluster %s: %w", cluster, err)
	}
	gvk := template.GroupVersionKind()
	mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil // the member does not serve the kind: nothing there
	}
	ri := member.Dynamic.Resource(mapping.Resource).Namespace(template.GetNamespace())
	existing, err := ri.Get(ctx, template.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("withdrawing from cluster %s: %w", cluster, err)
	}
	if !r.ownedBy(b, existing) {
		return nil // not ours: never touch what atoll did not create
	}
	preserve := spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion
	if handBack || preserve || ownership.HandedOver(existing) {
		return r.handBack(ctx, b, ri, existing, cluster)
	}
	uid := existing.GetUID()
	err = ri.Delete(ctx, template.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("withdrawing %s from cluster %s: %w", klog.KObj(existing), cluster, err)
	}
	r.recorder.Eventf(b, corev1.EventTypeNormal, "Withdrawn", "Deleted %s %s from cluster %s", gvk.Kind, klog.KObj(existing), cluster)
	return nil
}

// handBack removes atoll's ownership marks from a member object and leaves
// the object itself as it is, with an optimistic lock so a concurrent
// change is never overwritten. b (may be nil) gets an event.
func (r *reconciler) handBack(ctx context.Context, b client.Object, ri dynamic.ResourceInterface, existing *unstructured.Unstructured, cluster string) error {
	patch, err := ownership.HandBackPatch(existing)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, existing.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: names.FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("handing %s back in cluster %s: %w", klog.KObj(existing), cluster, err)
	}
	handedBackTotal.WithLabelValues(r.kind.name()).Inc()
	if b != nil { // nil: the binding is gone (a pending withdrawal)
		r.recorder.Eventf(b, corev1.EventTypeNormal, "HandedBack", "Kept %s %s in cluster %s and removed atoll's ownership marks",
			existing.GetKind(), klog.KObj(existing), cluster)
	}
	return nil
}

// ownedBy reports whether a member object carries binding b's ownership
// record: the managed label, the annotations naming b and b's permanent id.
// The managed label alone is not enough; anyone can set a label.
func (r *reconciler) ownedBy(b client.Object, obj metav1.Object) bool {
	rec, ok := ownership.Of(obj)
	return ok && rec == r.recordOf(b)
}

// recordOf is the ownership record binding b puts on its member objects.
func (r *reconciler) recordOf(b client.Object) ownership.Record {
	labels, _ := ownerMetadata(r.kind, b)
	rec := ownership.Record{Cluster: r.kindIsCluster(), Namespace: b.GetNamespace(), Name: b.GetName(),
		PermanentID: labels[names.ResourceBindingPermanentIDLabel]}
	if rec.Cluster {
		rec.PermanentID = labels[names.ClusterResourceBindingPermanentIDLabel]
	}
	return rec
}

// notReady says why cluster is not to be called now ("" when it may be):
// its Ready condition is False or Unknown. A Cluster without a Ready
// condition yet (just joined) is tried.
func (r *reconciler) notReady(ctx context.Context, cluster string) string {
	c := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: cluster}, c); err != nil {
		return "" // the member call reports it
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond == nil || cond.Status == metav1.ConditionTrue {
		return ""
	}
	return fmt.Sprintf("cluster %s is not Ready (%s); waiting for it", cluster, cond.Reason)
}

// tombstoneFor is the pending withdrawal of b's object from a member.
func (r *reconciler) tombstoneFor(b client.Object, spec *workv1alpha2.ResourceBindingSpec, handBack bool) tombstone {
	preserve := spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion
	return tombstone{APIVersion: spec.Resource.APIVersion, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace,
		Name: spec.Resource.Name, Owner: r.recordOf(b), HandBack: handBack || preserve}
}

// keepsData reports whether b is a dependency of a kind that holds data
// (interpreter.HoldsData), whose member copies atoll never removes as a side
// effect of the workloads that mount it moving or going.
func keepsData(b client.Object, gk schema.GroupKind) bool {
	return names.IsAttached(b.GetLabels()) && interpreter.HoldsData(gk)
}

// templateExists reports whether the template the binding records is still
// in the control plane (same uid).
func (r *reconciler) templateExists(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec) (bool, error) {
	gv, err := schema.ParseGroupVersion(spec.Resource.APIVersion)
	if err != nil {
		return false, nil
	}
	mapping, err := r.mapper.RESTMapping(gv.WithKind(spec.Resource.Kind).GroupKind(), gv.Version)
	if err != nil {
		return false, fmt.Errorf("mapping %s: %w", spec.Resource.Kind, err)
	}
	t, err := r.dynamic.Resource(mapping.Resource).Namespace(spec.Resource.Namespace).Get(ctx, spec.Resource.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return t.GetDeletionTimestamp() == nil && (spec.Resource.UID == "" || t.GetUID() == spec.Resource.UID), nil
}

// finalize withdraws the binding from every cluster it reached, then lets
// it go. A dependency that holds data is withdrawn only when its template
// is gone; otherwise (its binding deleted by hand, say) the member copies
// are handed back, never deleted.
func (r *reconciler) finalize(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(b, Finalizer) {
		return reconcile.Result{}, nil
	}
	handBack := false
	if gv, err := schema.ParseGroupVersion(spec.Resource.APIVersion); err == nil && keepsData(b, gv.WithKind(spec.Resource.Kind).GroupKind()) {
		exists, err := r.templateExists(ctx, spec)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("binding %s: %w", klog.KObj(b), err)
		}
		handBack = exists
	}
	clusters := map[string]bool{}
	for _, t := range spec.Clusters {
		clusters[t.Name] = true
	}
	for _, c := range r.members.reached(client.ObjectKeyFromObject(b), status) {
		clusters[c] = true
	}
	template := &unstructured.Unstructured{}
	template.SetAPIVersion(spec.Resource.APIVersion)
	template.SetKind(spec.Resource.Kind)
	template.SetNamespace(spec.Resource.Namespace)
	template.SetName(spec.Resource.Name)
	for c := range clusters {
		if why := r.notReady(ctx, c); why != "" {
			// A dead member does not hold the binding (and so the
			// template's re-creation) up: the withdrawal is recorded and
			// done when the member is back.
			if err := r.bury(ctx, c, r.tombstoneFor(b, spec, handBack)); err != nil {
				return reconcile.Result{}, err
			}
			continue
		}
		if err := r.withdrawOrHandBack(ctx, b, spec, c, template, handBack); err != nil {
			return reconcile.Result{}, err
		}
	}
	patch := client.MergeFromWithOptions(b.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(b, Finalizer)
	if err := r.client.Patch(ctx, b, patch); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	r.templates.forget(client.ObjectKeyFromObject(b))
	return reconcile.Result{}, nil
}

// writeStatus writes the binding status unless one was written less than
// StatusInterval ago, in which case it asks to come back when the interval
// has passed (member status changes in between coalesce into one write).
func (r *reconciler) writeStatus(ctx context.Context, b client.Object, status *workv1alpha2.ResourceBindingStatus) (time.Duration, error) {
	key := client.ObjectKeyFromObject(b)
	now := time.Now()
	r.members.mu.Lock()
	last := r.members.lastStatus[key]
	r.members.mu.Unlock()
	// Coalesce, except when the set of clusters changes: the status is where
	// atoll finds, after a restart, the clusters it must withdraw from.
	_, old := r.kind.parts(b)
	if wait := time.Duration(last) + r.opts.StatusInterval - time.Duration(now.UnixNano()); wait > 0 && sameClusters(old, status) {
		return wait, nil
	}
	// The scheduler writes other parts of the same status (the Scheduled
	// condition): WriteStatus's lock makes a racing write retry instead of
	// dropping the other's condition.
	if retry, err := bindingkind.WriteStatus(ctx, r.client, b, status); err != nil || retry > 0 {
		return retry, err
	}
	r.members.mu.Lock()
	r.members.lastStatus[key] = now.UnixNano()
	r.members.mu.Unlock()
	return 0, nil
}

// aggregateTemplateStatus writes the members' summed status onto the
// template when it differs from what the template shows.
func (r *reconciler) aggregateTemplateStatus(ctx context.Context, key types.NamespacedName, recordedRV string, template *unstructured.Unstructured, gvr schema.GroupVersionResource,
	items []workv1alpha2.AggregatedStatusItem, allCurrent bool) error {
	want, err := r.interp.AggregateStatus(ctx, template, items, allCurrent)
	if err != nil || want == nil {
		return err
	}
	have, _, _ := unstructured.NestedMap(template.Object, "status")
	changed := false
	for k, v := range want {
		if !sameStatusValue(have[k], v) {
			changed = true
			break
		}
	}
	if !changed {
		return nil
	}
	body, err := json.Marshal(map[string]any{"status": want})
	if err != nil {
		return err
	}
	updated, err := r.dynamic.Resource(gvr).Namespace(template.GetNamespace()).Patch(ctx, template.GetName(), types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: names.FieldManager}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("aggregating status onto %s %s: %w", template.GetKind(), klog.KObj(template), err)
	}
	// The status write bumps the template's resourceVersion, not what the
	// binding records; cache the written object so the next comparison sees
	// this status without reading the template again.
	r.templates.put(key, recordedRV, updated)
	return nil
}

func getLive(lister cache.GenericLister, ns, name string) *unstructured.Unstructured {
	var obj runtime.Object
	var err error
	if ns == "" {
		obj, err = lister.Get(name)
	} else {
		obj, err = lister.ByNamespace(ns).Get(name)
	}
	if err != nil {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// maxReflectedStatus bounds the member status one binding status item
// carries: a member object with a huge status (a CR listing thousands of
// entries) must not make its binding too large to write. A larger status
// is left out and replaced by a note saying so; aggregation onto the
// template still uses it.
const maxReflectedStatus = 16 << 10

func rawStatus(m map[string]any) *runtime.RawExtension {
	if m == nil {
		return nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	if len(data) > maxReflectedStatus {
		data, _ = json.Marshal(map[string]any{"atoll.dev/omitted": fmt.Sprintf("status of %d bytes is over the %d-byte limit", len(data), maxReflectedStatus)})
	}
	return &runtime.RawExtension{Raw: data}
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// sameStatusValue compares a template status field with the aggregated
// value. Integer status fields are omitempty: the API server drops a zero,
// so a missing field equals 0 (otherwise every settled Deployment, with
// unavailableReplicas 0, would be patched again on every sync).
func sameStatusValue(have, want any) bool {
	if have == nil {
		have = int64(0)
	}
	return equality.Semantic.DeepEqual(normalizeNumber(have), normalizeNumber(want))
}

func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	return v
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// suspendedOn reports whether dispatching to cluster alone is suspended
// (suspension.dispatchingOnClusters).
func suspendedOn(spec *workv1alpha2.ResourceBindingSpec, cluster string) bool {
	if spec.Suspension == nil || spec.Suspension.DispatchingOnClusters == nil {
		return false
	}
	return slices.Contains(spec.Suspension.DispatchingOnClusters.ClusterNames, cluster)
}

// maxConditionMessage bounds the FullyApplied message, which lists the
// failing clusters' reasons; maxItemMessage bounds one cluster's message (a
// member's error can quote a whole object).
const (
	maxConditionMessage = 2048
	maxItemMessage      = 1024
)

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// waitSynced gives a member informer that was just started a moment to list
// before the binding is retried with backoff.
func waitSynced(ctx context.Context, member *clustercache.Member, gvr schema.GroupVersionResource) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return cache.WaitForCacheSync(ctx.Done(), func() bool { return member.HasSynced(gvr) })
}

func sameClusters(a, b *workv1alpha2.ResourceBindingStatus) bool {
	if len(a.AggregatedStatus) != len(b.AggregatedStatus) {
		return false
	}
	for i := range a.AggregatedStatus {
		if a.AggregatedStatus[i].ClusterName != b.AggregatedStatus[i].ClusterName {
			return false
		}
	}
	return true
}
