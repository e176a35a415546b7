package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// withdraw removes the binding's object from a cluster it left. Only an
// object that carries this binding's ownership record is touched. One that
// atoll took over from someone else (conflictResolution Overwrite), or that
// the binding preserves on deletion, is handed back: atoll's marks are
// removed and the object stays. deleted reports whether the object was
// deleted; the caller records it (withdrawals.record).
func (r *reconciler) withdraw(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string,
	template *unstructured.Unstructured) (deleted bool, err error) {
	return r.withdrawOrHandBack(ctx, b, spec, cluster, template, false)
}

// withdrawOrHandBack is withdraw, handing the object back instead of
// deleting it when handBack is set.
func (r *reconciler) withdrawOrHandBack(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, cluster string,
	template *unstructured.Unstructured, handBack bool) (deleted bool, err error) {
	member, err := r.cc.Member(ctx, cluster)
	if apierrors.IsNotFound(err) {
		return false, nil // the cluster itself is gone
	}
	if err != nil {
		return false, fmt.Errorf("withdrawing from cluster %s: %w", cluster, err)
	}
	gvk := template.GroupVersionKind()
	mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, nil // the member does not serve the kind: nothing there
	}
	ri := member.Dynamic.Resource(mapping.Resource).Namespace(template.GetNamespace())
	withdrawn := func(obj *unstructured.Unstructured) {
		klog.FromContext(ctx).V(1).Info("Withdrew a member object", "binding", klog.KObj(b), "cluster", cluster,
			"kind", gvk.Kind, "object", klog.KObj(obj))
	}
	preserve := spec.PreserveResourcesOnDeletion != nil && *spec.PreserveResourcesOnDeletion
	// The member cache's copy first: one that carries b's record and is
	// deleted outright goes without being read again (a member GET per
	// withdrawal saved). The DELETE names the cached version, so a cache
	// behind a change (the object taken over, handed back, replaced) deletes
	// nothing, and the object is read below.
	if !handBack && !preserve {
		lister := member.SyncedLister(mapping.Resource)
		if cached := getLive(lister, template.GetNamespace(), template.GetName()); cached != nil && r.deletableUnread(b, gvk.GroupKind(), cached) {
			err := ownership.Delete(ctx, ri, cached, metav1.DeleteOptions{})
			if err == nil {
				withdrawn(cached)
				return true, nil
			}
			if !errors.Is(err, ownership.ErrChanged) {
				return false, fmt.Errorf("withdrawing %s from cluster %s: %w", klog.KObj(cached), cluster, err)
			}
			staleCopies.WithLabelValues(r.kind.name(), "delete").Inc()
		}
	}
	for attempt := 1; ; attempt++ {
		existing, err := ri.Get(ctx, template.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("withdrawing from cluster %s: %w", cluster, err)
		}
		if !r.ownedBy(b, existing) {
			return false, nil // not ours: never touch what atoll did not create
		}
		if handBack || preserve || ownership.HandedOver(existing) {
			return false, r.handBack(ctx, b, ri, existing, cluster)
		}
		if keep, err := r.guardDeletion(ctx, b, member, ri, existing, cluster); err != nil || keep {
			return false, err
		}
		// Only the version read above goes: one changed since (taken over
		// a moment ago, say) is read and decided again.
		err = ownership.Delete(ctx, ri, existing, metav1.DeleteOptions{})
		if errors.Is(err, ownership.ErrChanged) && attempt < withdrawAttempts {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("withdrawing %s from cluster %s: %w", klog.KObj(existing), cluster, err)
		}
		withdrawn(existing)
		return true, nil
	}
}

// withdrawAttempts bounds how often one withdrawal reads an object that
// keeps changing between its read and its DELETE (a member controller
// writing its status); past that the pass fails and is retried with
// backoff.
const withdrawAttempts = 3

// deletableUnread reports whether a cached member copy of kind gk may be
// deleted without reading it from the member first: it carries b's
// record, atoll did not take it over, and its deletion takes nothing else
// with it (a CRD or a Namespace is always read and guarded).
func (r *reconciler) deletableUnread(b client.Object, gk schema.GroupKind, cached *unstructured.Unstructured) bool {
	return r.ownedBy(b, cached) && !ownership.HandedOver(cached) && !takesOthersWith(gk)
}

// withdrawals are the clusters one pass over a binding deleted its object
// from. They make one Withdrawn event per pass, not one per cluster:
// deleting a template placed on 50 clusters is one event write, not 50
// (issue 14: no write storms).
type withdrawals struct {
	clusters []string
}

// add notes that the object was deleted from cluster.
func (w *withdrawals) add(cluster string) { w.clusters = append(w.clusters, cluster) }

// record writes the pass's Withdrawn event on b, naming the clusters in
// order, if anything was deleted.
func (w *withdrawals) record(r *reconciler, b client.Object, spec *workv1alpha2.ResourceBindingSpec) {
	if len(w.clusters) == 0 {
		return
	}
	slices.Sort(w.clusters)
	r.recorder.Eventf(b, nil, corev1.EventTypeNormal, "Withdrawn", "Withdraw", "Deleted %s %s from cluster(s) %s",
		spec.Resource.Kind, klog.KRef(spec.Resource.Namespace, spec.Resource.Name), strings.Join(w.clusters, ", "))
}

// errContentsLeft: a member CRD or Namespace waits for the objects atoll
// propagated under it (custom resources, namespaced objects) to be
// withdrawn before it goes.
var errContentsLeft = errors.New("objects atoll propagated are still under it in the member")

// errGroupsUnseen: a member Namespace waits until every API group of the
// member answers discovery, since a group that does not may hold objects
// in it that atoll has not seen.
var errGroupsUnseen = errors.New("an API group of the member does not answer discovery, so what the namespace holds there is unseen")

// waitReason says why a withdrawal that failed with err waits on the
// member's state ("" for any other failure): the reason a binding's
// status and events give while its copy stays.
func waitReason(err error) string {
	for _, wait := range []error{errContentsLeft, errGroupsUnseen} {
		if errors.Is(err, wait) {
			return wait.Error()
		}
	}
	return ""
}

// guardDeletion decides the withdrawal of a member object whose deletion
// takes others with it: a CustomResourceDefinition (every object of its
// kind) or a Namespace (everything in it). keep: hand it back instead (done
// here); errContentsLeft: wait. b is nil for a pending withdrawal.
func (r *reconciler) guardDeletion(ctx context.Context, b client.Object, member *clustercache.Member, ri dynamic.ResourceInterface,
	obj *unstructured.Unstructured, cluster string) (keep bool, err error) {
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case interpreter.IsCustomResourceDefinition(gk):
		return r.crdInUse(ctx, b, member.Dynamic, ri, obj, cluster)
	case isNamespace(gk):
		return r.namespaceInUse(ctx, b, member, ri, obj, cluster)
	}
	return false, nil
}

// takesOthersWith reports whether deleting an object of kind gk deletes
// other objects too: a CRD's custom resources, a Namespace's contents.
func takesOthersWith(gk schema.GroupKind) bool {
	return interpreter.IsCustomResourceDefinition(gk) || isNamespace(gk)
}

func isNamespace(gk schema.GroupKind) bool { return gk.Group == "" && gk.Kind == "Namespace" }

// crdInUse decides the withdrawal of a member CustomResourceDefinition (b
// is nil for a pending withdrawal whose binding is gone), whose deletion
// would delete every object of its kind there: with an object atoll does
// not own (a member's own data), or serving no version (its objects
// cannot be listed), it is handed back and kept (keep true); with only
// objects atoll propagated it waits (an error: retried with backoff) until
// their own withdrawals are done, so a CRD never goes before its custom
// resources; with none it may be deleted.
func (r *reconciler) crdInUse(ctx context.Context, b client.Object, dyn dynamic.Interface, ri dynamic.ResourceInterface,
	crd *unstructured.Unstructured, cluster string) (keep bool, err error) {
	gvr, _, ok := interpreter.CustomResourceOf(crd)
	if !ok {
		// It serves no version (the API server accepts that), so the
		// objects stored under it cannot be listed, and deleting it would
		// delete them; its storedVersions are set at creation, so they do
		// not tell an empty one from a full one.
		return true, r.keepCRD(ctx, b, ri, crd, cluster, "it serves no version, so the objects stored under it cannot be listed")
	}
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 500})
	if apierrors.IsNotFound(err) {
		return false, nil // not served any more: nothing of it is left
	}
	if err != nil {
		return false, fmt.Errorf("listing %s in cluster %s before withdrawing their CRD: %w", gvr.Resource, cluster, err)
	}
	if len(list.Items) == 0 {
		return false, nil
	}
	for i := range list.Items {
		if _, owned := ownership.Of(&list.Items[i]); !owned {
			return true, r.keepCRD(ctx, b, ri, crd, cluster, fmt.Sprintf("it serves objects atoll does not own (%s %s)",
				list.Items[i].GetKind(), klog.KObj(&list.Items[i])))
		}
	}
	return false, fmt.Errorf("withdrawing CustomResourceDefinition %s from cluster %s: %d object(s) of it left: %w", crd.GetName(), cluster, len(list.Items), errContentsLeft)
}

// keepInstead hands back a member object whose deletion would take others
// with it (a CRD, a namespace: guardDeletion) instead of deleting it, and
// says why in an event of the given reason on b (nil for a pending
// withdrawal: the binding is gone) naming it as what, and in the log.
func (r *reconciler) keepInstead(ctx context.Context, b client.Object, ri dynamic.ResourceInterface, obj *unstructured.Unstructured,
	cluster, reason, what, why string) error {
	if b != nil {
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, reason, "Withdraw", "Kept %s %s in cluster %s: %s", what, obj.GetName(), cluster, why)
	}
	klog.FromContext(ctx).V(0).Info("Keeping a member object instead of withdrawing it", "kind", obj.GetKind(), "object", obj.GetName(),
		"cluster", cluster, "reason", why)
	return r.handBack(ctx, b, ri, obj, cluster)
}

// keepCRD is keepInstead for a CustomResourceDefinition.
func (r *reconciler) keepCRD(ctx context.Context, b client.Object, ri dynamic.ResourceInterface, crd *unstructured.Unstructured, cluster, why string) error {
	return r.keepInstead(ctx, b, ri, crd, cluster, "CRDKept", "CustomResourceDefinition", why)
}

// handBack removes atoll's ownership marks from a member object and leaves
// the object itself as it is, never over a concurrent change
// (ownership.HandBack). b (may be nil) gets an event.
func (r *reconciler) handBack(ctx context.Context, b client.Object, ri dynamic.ResourceInterface, existing *unstructured.Unstructured, cluster string) error {
	handedBack, err := ownership.HandBack(ctx, ri, existing, names.FieldManager)
	if err != nil {
		return fmt.Errorf("handing %s back in cluster %s: %w", klog.KObj(existing), cluster, err)
	}
	if !handedBack {
		return nil // gone, or no longer this binding's copy: nothing to hand back
	}
	handedBackTotal.WithLabelValues(r.kind.name()).Inc()
	if b != nil { // nil: the binding is gone (a pending withdrawal)
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, "HandedBack", "HandBack", "Kept %s %s in cluster %s and removed atoll's ownership marks",
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
	labels, _ := r.kind.ownerMetadata(b)
	rec := ownership.Record{Cluster: r.kindIsCluster(), Namespace: b.GetNamespace(), Name: b.GetName(),
		PermanentID: labels[workv1alpha2.ResourceBindingPermanentIDLabel]}
	if rec.Cluster {
		rec.PermanentID = labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
	}
	return rec
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
	r.opts.Handoff.Done(b.GetUID(), 0)
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
	for _, c := range r.reached.of(client.ObjectKeyFromObject(b), status) {
		clusters[c] = true
	}
	template := &unstructured.Unstructured{}
	template.SetAPIVersion(spec.Resource.APIVersion)
	template.SetKind(spec.Resource.Kind)
	template.SetNamespace(spec.Resource.Namespace)
	template.SetName(spec.Resource.Name)
	var withdrawn withdrawals
	defer withdrawn.record(r, b, spec) // also what was deleted before an error
	// One member's failure (a withdrawal that must wait there) does not
	// hold up the others': every cluster is tried, and the binding keeps
	// its finalizer while any failed.
	var errs []error
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
		deleted, err := r.withdrawOrHandBack(ctx, b, spec, c, template, handBack)
		if err != nil {
			if why := waitReason(err); why != "" {
				// The binding is going: its events are where a user
				// looks for why it is still there.
				r.recorder.Eventf(b, nil, corev1.EventTypeNormal, "WithdrawalWaiting", "Withdraw", "Withdrawal of %s %s from cluster %s waits: %s",
					spec.Resource.Kind, klog.KRef(spec.Resource.Namespace, spec.Resource.Name), c, why)
			}
			errs = append(errs, err)
			continue
		}
		if deleted {
			withdrawn.add(c)
		}
	}
	if len(errs) > 0 {
		return reconcile.Result{}, errors.Join(errs...)
	}
	// b may be the cache's object: the finalizer comes off a copy.
	base := b
	b = b.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(b, Finalizer)
	if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	r.templates.Forget(client.ObjectKeyFromObject(b))
	return reconcile.Result{}, nil
}
