package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// syncCluster makes the member object of one cluster match the template
// with the cluster's overrides applied. reached says the binding may
// already have a copy there (its status or this process says so).
func (r *reconciler) syncCluster(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string, reached bool,
	template *unstructured.Unstructured, replicas *int64, hpa *rebalance.Bounds, held string, overrides *overridePolicies, rule *baselineRule) clusterResult {
	res := clusterResult{item: workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown}}
	fail := func(err error) clusterResult {
		r.unresponsive.observe(cluster, err)
		res.item.Applied, res.item.AppliedMessage, res.err = false, text.Truncate(err.Error(), maxItemMessage), err
		return res
	}
	member, err := r.cc.Member(ctx, cluster)
	if err != nil {
		return fail(fmt.Errorf("cluster %s: %w", cluster, err))
	}
	// The member cache is looked at before the template is rendered: a
	// binding that parks below (a restart: every binding, once) renders
	// nothing. Rendering keeps the template's kind.
	gvk := template.GroupVersionKind()
	mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fail(fmt.Errorf("cluster %s does not serve %s: %w", cluster, gvk, err))
	}
	lister, err := r.watch(member, mapping.Resource)
	if err != nil {
		return fail(err)
	}
	listing := member.Listing(mapping.Resource, firstListGrace)
	switch {
	case listing && !reached:
		// The cache is still making its first list (a restart, tens of
		// thousands of objects), and this binding is new to the cluster:
		// it does not wait behind that backlog. The conflict check below
		// reads the one object it may meet directly from the member (live
		// is nil without a lister), as for any object the cache has not
		// seen yet.
		lister = nil
	case listing:
		// The binding may have a copy there, and what it looks like is not
		// known yet. Not a failure, and not a reason to hold the worker;
		// reading every such copy one by one instead would be the list
		// again, object by object. The sync parks the binding on every list
		// its clusters met and brings it back once all are in
		// (parkUntilListed).
		res.listing = &memberList{member: member, gvr: mapping.Resource}
		return res
	case !waitSyncedFor(ctx, member, mapping.Resource, 10*time.Second):
		return fail(fmt.Errorf("cluster %s: %s: %w", cluster, mapping.Resource.Resource, errNotSynced))
	}
	desired, err := r.interp.Render(ctx, template, replicas)
	if err != nil {
		return res.interpretationFailed(err)
	}
	if hpa != nil {
		// This cluster's share of the HPA's range (before overrides, so an
		// override of minReplicas/maxReplicas still wins).
		interpreter.SetAutoscalerBounds(desired, hpa.Min, hpa.Max)
	}
	// Overrides apply to the rendered manifest, before atoll's own metadata
	// (so no override can detach the object from its binding) and before
	// hashing (so a policy change rewrites exactly the objects it changes).
	desired, appliedOverrides, err := r.override(ctx, desired, cluster, overrides)
	if err != nil {
		// A policy that cannot apply is the user's to fix; its change
		// enqueues the binding again, so there is no retry here. The member
		// object is left as it is.
		r.overrideFailed(b, cluster, err)
		res.item.AppliedMessage = text.Truncate(err.Error(), maxItemMessage)
		if live := getLive(lister, template.GetNamespace(), template.GetName()); live != nil && r.ownedBy(b, live) {
			r.observe(ctx, &res, live, rule)
		}
		return res
	}
	// State a failover preserved from the copy this one replaces (after the
	// overrides, as Karmada injects it).
	if state := eviction.InjectedLabels(spec, cluster); len(state) > 0 {
		desired.SetLabels(merge(desired.GetLabels(), state))
	}
	live := getLive(lister, desired.GetNamespace(), desired.GetName())
	if live != nil && !r.ownedBy(b, live) {
		// The managed label alone proves nothing (anyone can set it): an
		// object without this binding's ownership record is someone else's,
		// and goes through conflict resolution like any other.
		live = nil
	}
	tookOver := ""
	if live != nil && live.GetAnnotations()[workv1alpha2.TookOverAnnotation] == "true" {
		tookOver = tookOverMessage(desired, cluster)
	} else if live == nil && held == "" {
		msg, blocked, ours, err := r.conflict(ctx, member, mapping.Resource, b, desired, conflictResolution(template, spec.ConflictResolution))
		if err != nil {
			return fail(err)
		}
		if blocked {
			res.item.AppliedMessage = msg
			return res
		}
		tookOver = msg
		// Ours, and the cache had not seen it: it is the live object, so
		// that what the member owns (replicas its HPA scales) is kept,
		// not reset to the cluster's share.
		live = ours
	}
	labels, annotations := r.kind.ownerMetadata(b)
	if tookOver != "" {
		annotations[workv1alpha2.TookOverAnnotation] = "true"
	}
	desired.SetLabels(merge(desired.GetLabels(), labels))
	if spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion {
		annotations[workv1alpha2.PreserveOnDeleteAnnotation] = "true"
	}
	desired.SetAnnotations(merge(desired.GetAnnotations(), annotations))
	hash, err := interpreter.Hash(desired)
	if err != nil {
		return fail(err)
	}
	desired.SetAnnotations(merge(desired.GetAnnotations(), map[string]string{workv1alpha2.ManifestHashAnnotation: hash}))

	res.current = live != nil && live.GetAnnotations()[workv1alpha2.ManifestHashAnnotation] == hash
	if live != nil {
		r.observe(ctx, &res, live, rule)
	}
	// What the member owns (replicas a member HPA scales, a Job's immutable
	// completions, a script's retained fields) is kept after hashing and
	// before the drift check, so that the member's own changes are neither
	// drift nor a reason to write.
	if desired, err = r.interp.Retain(ctx, template, desired, live, replicas); err != nil {
		return res.interpretationFailed(err)
	}
	if live != nil && res.current {
		drifted, path := interpreter.Drifted(desired, live)
		if !drifted {
			res.item.Applied, res.item.AppliedMessage = true, tookOver
			return res
		}
		klog.FromContext(ctx).V(1).Info("Member object drifted", "cluster", cluster, "object", klog.KObj(desired), "field", path)
	}
	if held != "" {
		res.item.Applied, res.item.AppliedMessage = live != nil && res.current, held
		return res
	}
	if err := r.ensureNamespace(ctx, member, cluster, desired.GetNamespace()); err != nil {
		return fail(err)
	}
	applyStart := r.opts.Clock.Now()
	var applied *unstructured.Unstructured
	if live == nil && tookOver == "" {
		// Nothing there when the cache and the conflict check looked: a
		// create, which writes nothing into an object someone else made
		// since (design 0008, decision 16). Such an object is met by
		// conflict resolution on the retry.
		applied, err = ownership.Create(ctx, member.REST, mapping.Resource, desired, names.FieldManager)
		if errors.Is(err, ownership.ErrExists) {
			staleCopies.WithLabelValues(r.kind.name(), "create").Inc()
		}
	} else {
		ri := member.Dynamic.Resource(mapping.Resource).Namespace(desired.GetNamespace())
		applied, err = ownership.Apply(ctx, ri, desired, live, names.FieldManager)
		if errors.Is(err, ownership.ErrChanged) {
			staleCopies.WithLabelValues(r.kind.name(), "apply").Inc()
			applied, err = r.applyOverFresh(ctx, ri, b, template, desired, replicas)
		}
	}
	memberApplySeconds.WithLabelValues(cluster, applyOutcome(err)).Observe(r.opts.Clock.Since(applyStart).Seconds())
	if apierrors.IsNotFound(err) && desired.GetNamespace() != "" {
		// The namespace was deleted in the member since atoll saw it: the
		// retry creates it again.
		r.namespaces.unmark(namespaceKey(member, desired.GetNamespace()))
	}
	if err != nil {
		return fail(fmt.Errorf("applying %s %s to cluster %s: %w", gvk.Kind, klog.KObj(desired), cluster, err))
	}
	r.unresponsive.clear(cluster)
	if tookOver != "" && live == nil {
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, "TookOver", "Apply", "%s", tookOver)
	}
	res.item.Applied, res.item.AppliedMessage = true, tookOver
	res.current, res.written = true, true
	r.overridesApplied(spec, cluster, appliedOverrides)
	r.observe(ctx, &res, applied, rule)
	return res
}

// applyOverFresh applies desired once more after the apply over the
// cached copy met a newer version (design 0008 decision 15): the copy
// changed since the cache's version this sync decided from (its member
// HPA scaled it, someone took it over). It is read again; still b's, what
// the member owns is kept from that version and the apply goes over it;
// no longer b's, nothing is written and the error says so (the change's
// own event brings the binding back, and the next pass treats the object
// as one atoll does not own).
func (r *reconciler) applyOverFresh(ctx context.Context, ri dynamic.ResourceInterface, b client.Object, template, desired *unstructured.Unstructured,
	replicas *int64) (*unstructured.Unstructured, error) {
	fresh, err := ri.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !r.ownedBy(b, fresh) {
		return nil, fmt.Errorf("%w, and it no longer carries this binding's ownership record", ownership.ErrChanged)
	}
	if desired, err = r.interp.Retain(ctx, template, desired, fresh, replicas); err != nil {
		return nil, err
	}
	return ownership.Apply(ctx, ri, desired, fresh, names.FieldManager)
}

// observe records a member object's health and reflected status in res.
// A baseline's object is healthy when it is ready by the baseline's rule.
func (r *reconciler) observe(ctx context.Context, res *clusterResult, live *unstructured.Unstructured, rule *baselineRule) {
	if rule != nil {
		rule.observe(res, live)
	} else {
		health, err := r.interp.Health(ctx, live)
		if err != nil {
			res.interpretErr = err
		}
		res.item.Health = health
	}
	reflected, err := r.interp.ReflectStatus(ctx, live)
	if err != nil {
		res.interpretErr = err
		return
	}
	res.reflected, res.item.Status = rawStatus(reflected)
}

// executorOperations are the interpreter operations the executor runs; it
// clears only the Interpreted conditions they left.
var executorOperations = []interpreter.Operation{
	interpreter.ReplicaRevision, interpreter.Retention, interpreter.StatusReflection,
	interpreter.HealthInterpretation, interpreter.StatusAggregation,
}

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
// message says so. An object that is already this binding's (the cache
// had not seen it yet) is returned as ours: it is the live object.
func (r *reconciler) conflict(ctx context.Context, member *clustercache.Member, gvr schema.GroupVersionResource, b client.Object,
	desired *unstructured.Unstructured, resolution policyv1alpha1.ConflictResolution) (msg string, blocked bool, ours *unstructured.Unstructured, err error) {
	existing, err := member.Dynamic.Resource(gvr).Namespace(desired.GetNamespace()).Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, nil, nil
	}
	if err != nil {
		return "", false, nil, fmt.Errorf("cluster %s: checking for an existing %s: %w", member.Name, klog.KObj(desired), err)
	}
	if r.ownedBy(b, existing) {
		return "", false, existing, nil // ours; the cache had not seen it yet
	}
	if resolution == policyv1alpha1.ConflictOverwrite {
		return tookOverMessage(desired, member.Name), false, nil, nil
	}
	return fmt.Sprintf("%s %s already exists in cluster %s and is not managed by atoll; conflictResolution is Abort",
		desired.GetKind(), klog.KObj(desired), member.Name), true, nil, nil
}

// memberCacheKey names one member connection's cache of gvr: a member
// rebuilt (new credentials) is a new pointer, so a new cache.
func memberCacheKey(member *clustercache.Member, gvr schema.GroupVersionResource) string {
	return fmt.Sprintf("%p/%s", member, gvr)
}

// memberList is one member's first list of one resource.
type memberList struct {
	member *clustercache.Member
	gvr    schema.GroupVersionResource
}

// parkUntilListed holds the binding key until every one of the lists its
// clusters met is in (parked.go), and brings it back once. Parked on each
// list apart, a binding placed on two members came back when each list was
// in; when both ended close together it ran twice with both in, comparing
// every copy twice (a restart of the whole control plane: about four
// comparisons per binding of two copies).
func (r *reconciler) parkUntilListed(key types.NamespacedName, results []clusterResult) {
	var lists []*memberList
	var names []string
	for _, res := range results {
		if res.listing != nil {
			lists = append(lists, res.listing)
			names = append(names, memberCacheKey(res.listing.member, res.listing.gvr))
		}
	}
	r.parked.park(strings.Join(names, "+"), reconcile.Request{NamespacedName: key}, func() bool {
		return slices.ContainsFunc(lists, func(l *memberList) bool { return l.member.Listing(l.gvr, firstListGrace) })
	})
}

// watch makes sure the member's objects of gvr are watched, with events
// mapped back to their binding.
func (r *reconciler) watch(member *clustercache.Member, gvr schema.GroupVersionResource) (cache.GenericLister, error) {
	key := memberCacheKey(member, gvr)
	if !r.watched.mark(key) {
		return member.Watch(gvr, nil)
	}
	cluster := member.Name
	lister, err := member.Watch(gvr, cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, firstList bool) { r.memberEvent(cluster, obj, true, firstList) },
		UpdateFunc: func(_, obj any) { r.memberEvent(cluster, obj, true, false) },
		DeleteFunc: func(obj any) { r.memberEvent(cluster, obj, false, false) },
	})
	if err != nil {
		r.watched.unmark(key)
		return nil, fmt.Errorf("cluster %s: watching %s: %w", member.Name, gvr.Resource, err)
	}
	return lister, nil
}

// getLive is the cached member object, nil when the lister has none or
// there is no lister (the cache is still listing).
func getLive(lister cache.GenericLister, ns, name string) *unstructured.Unstructured {
	if lister == nil {
		return nil
	}
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
	return clustercache.Live(obj)
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

// waitSyncedFor gives a member informer that was just started a moment to list
// before the binding is retried with backoff.
func waitSyncedFor(ctx context.Context, member *clustercache.Member, gvr schema.GroupVersionResource, wait time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return cache.WaitForCacheSync(ctx.Done(), func() bool { return member.HasSynced(gvr) })
}
