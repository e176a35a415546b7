package detector

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/tenancy"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// fieldManager of the detector's writes.
const fieldManager = names.FieldManager + "-detector"

var errNotSynced = errors.New("template informer has not synced yet")

// errCacheBehind: a binding this detector created is not in the cache yet;
// the template is looked at again after cacheBehindRetry.
var errCacheBehind = errors.New("binding created but not in the cache yet")

const cacheBehindRetry = 200 * time.Millisecond

// reconcileTemplate converges one template: which policy claims it, its
// claim metadata, and its binding. It reads templates from the metadata
// informers, policies and bindings from the manager's cache, and writes only
// what differs.
func (d *Detector) reconcileTemplate(ctx context.Context, it item) error {
	w := d.watchedGVR(it.GVR)
	if w == nil {
		return nil // no longer watched
	}
	if !w.informer.HasSynced() {
		return errNotSynced
	}
	ref := workv1alpha2.ObjectReference{
		APIVersion: w.GVR.GroupVersion().String(), Kind: w.Kind, Namespace: it.Namespace, Name: it.Name,
	}
	binding, err := d.getBinding(ctx, w, ref)
	if err != nil {
		return err
	}
	if binding != nil && !refersTo(binding, ref) {
		d.log.Info("Binding name is taken by another template; not touching it",
			"binding", klog.KObj(binding), "template", ref.Kind+" "+klog.KRef(ref.Namespace, ref.Name).String())
		return nil
	}

	obj, exists, err := w.informer.GetIndexer().GetByKey(it.key())
	if err != nil {
		return err
	}
	if !exists {
		// The template is gone: so is its binding (there may be no garbage
		// collector in the control plane).
		if d.opts.Templates != nil {
			d.opts.Templates.Forget(bindingKey(w, it.Namespace, it.Name))
		}
		return d.deleteBinding(ctx, binding)
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Errorf("unexpected object %T in the %s informer", obj, w.GVR)
	}
	if m.DeletionTimestamp != nil || d.skipped(w, m) {
		// Deleting: the binding goes once the template is gone.
		return nil
	}

	claim := claimOf(m.Labels, m.Annotations)
	tenants, err := tenancy.Load(ctx, d.client)
	if err != nil {
		return err
	}
	if d.lazyUnchanged(ctx, claim, m, binding, tenants) {
		return nil
	}
	candidates, err := d.candidates(ctx, w.GVK(), m.Namespace)
	if err != nil {
		return err
	}
	candidates = d.withinTenants(candidates, m, tenants)
	decision := Choose(templateOf(w, m), claim, candidates)
	p := decision.Policy
	if p == nil && d.autoProvisioned(w, m) {
		p = namespaceAutoProvision
	}
	if p == nil {
		// Released: the binding (and the member objects) stay, unless the
		// policy that let go opted into withdrawal.
		if err := d.releaseBinding(ctx, binding); err != nil {
			return err
		}
		_, _, err := d.patchClaim(ctx, w, m, nil)
		return err
	}
	if p.PermanentID == "" && !p.AutoProvision {
		// It cannot claim before the detector has labelled it, and a
		// lesser policy must not claim in the meantime.
		return fmt.Errorf("policy %s has no permanent id yet", policyRef(p))
	}
	if !decision.Kept && !p.AutoProvision {
		d.log.V(1).Info("Policy claims template", "policy", policyRef(p), "template", ref.Kind+" "+klog.KObj(m).String())
	}
	m, full, err := d.patchClaim(ctx, w, m, p)
	if err != nil || m == nil {
		return err
	}
	return d.writeBinding(ctx, w, m, full, p, binding)
}

// lazyUnchanged reports whether the template is claimed by an existing
// policy with activationPreference Lazy and has not changed since its
// binding was written: then the policy's changes (including a changed
// selector or priority) wait for the template's next change.
func (d *Detector) lazyUnchanged(ctx context.Context, claim *Claim, m *metav1.PartialObjectMetadata, binding client.Object, tenants *tenancy.Set) bool {
	if claim == nil || binding == nil || binding.GetAnnotations()[TemplateFingerprintAnnotation] != fingerprint(m) {
		return false
	}
	labels, _ := claimMetadata(&Policy{Cluster: claim.Cluster, PermanentID: claim.PermanentID})
	for k, v := range labels {
		if binding.GetLabels()[k] != v {
			return false
		}
	}
	p, err := d.getPolicy(ctx, claim)
	if err != nil || p == nil || !claim.Is(p) || p.Deleting || p.Spec.ActivationPreference != policyv1alpha1.LazyActivation {
		return false
	}
	// Lazy waits for the template's change, but never keeps a claim a
	// tenant boundary (added since) forbids.
	ok, _ := mayClaim(tenants, p, m)
	return ok
}

// candidates are the policies that could claim a template of kind gvk in
// namespace ns: those with a selector for the kind (PropagationPolicies of
// ns only). A claiming policy without such a selector no longer matches.
func (d *Detector) candidates(ctx context.Context, gvk schema.GroupVersionKind, ns string) ([]*Policy, error) {
	byKind := client.MatchingFields{IndexPolicySelectorGVK: selectorKey(gvk.GroupVersion().String(), gvk.Kind)}
	var out []*Policy
	if ns != "" {
		var pps policyv1alpha1.PropagationPolicyList
		if err := d.client.List(ctx, &pps, client.InNamespace(ns), byKind, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing PropagationPolicies in %s: %w", ns, err)
		}
		for i := range pps.Items {
			out = append(out, policyOf(&pps.Items[i]))
		}
	}
	var cpps policyv1alpha1.ClusterPropagationPolicyList
	if err := d.client.List(ctx, &cpps, byKind, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterPropagationPolicies: %w", err)
	}
	for i := range cpps.Items {
		out = append(out, policyOf(&cpps.Items[i]))
	}
	return out, nil
}

// withinTenants drops the PropagationPolicies whose tenant boundary does
// not hold the template (pkg/tenancy): a tenant's policy never claims
// another tenant's template, even one written while admission was off. A
// claim such a policy holds is released like any other lost match.
func (d *Detector) withinTenants(candidates []*Policy, m *metav1.PartialObjectMetadata, tenants *tenancy.Set) []*Policy {
	if m.Namespace == "" || tenants.Empty() {
		return candidates
	}
	out := candidates[:0:0]
	for _, p := range candidates {
		if ok, why := mayClaim(tenants, p, m); !ok {
			d.log.V(1).Info("Policy may not claim the template: outside its tenant's boundary", "policy", policyRef(p),
				"template", klog.KObj(m), "reason", why)
			continue
		}
		out = append(out, p)
	}
	return out
}

// mayClaim reports whether p's tenant boundary holds the template (always
// for cluster-scoped policies: they are platform admins').
func mayClaim(set *tenancy.Set, p *Policy, m metav1.Object) (bool, string) {
	if p.Cluster || m.GetNamespace() == "" {
		return true, ""
	}
	return set.ForPolicy(p.Namespace, map[string]string{tenancyv1alpha1.TenantAnnotation: p.Tenant}).OwnsTemplate(m.GetNamespace(), m.GetLabels())
}

// getPolicy returns the policy a claim names, nil when it does not exist.
func (d *Detector) getPolicy(ctx context.Context, c *Claim) (*Policy, error) {
	var obj client.Object = &policyv1alpha1.PropagationPolicy{}
	if c.Cluster {
		obj = &policyv1alpha1.ClusterPropagationPolicy{}
	}
	err := d.client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, obj, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return policyOf(obj), nil
}

// patchClaim makes the template's claim metadata record p (nothing for nil)
// with a metadata merge patch, only when it differs. It returns the
// template's metadata after the patch, nil if the template is gone, and,
// when it patched, the whole template the API server answered with (so
// that writing the binding needs no read of its own).
func (d *Detector) patchClaim(ctx context.Context, w *watched, m *metav1.PartialObjectMetadata, p *Policy) (*metav1.PartialObjectMetadata, *unstructured.Unstructured, error) {
	patch := claimPatch(m.Labels, m.Annotations, p)
	if patch == nil {
		return m, nil, nil
	}
	full, err := d.dynamic.Resource(w.GVR).Namespace(m.Namespace).Patch(ctx, m.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("patching claim of %s %s: %w", w.Kind, klog.KObj(m), err)
	}
	op := "claim"
	if p == nil {
		op = "unclaim"
		d.log.V(1).Info("Template released", "template", w.Kind+" "+klog.KObj(m).String())
	}
	claimsWritten.WithLabelValues(op).Inc()
	return metadataOf(full), full, nil
}

// metadataOf is u's metadata as the template informers hold it.
func metadataOf(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}}
	if raw, ok := u.Object["metadata"].(map[string]any); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &out.ObjectMeta)
	}
	return out
}

// writeBinding creates or updates the template's binding for policy p;
// full is the whole template when the caller has it at m's version.
func (d *Detector) writeBinding(ctx context.Context, w *watched, m *metav1.PartialObjectMetadata, full *unstructured.Unstructured, p *Policy, existing client.Object) error {
	if existing != nil && existing.GetDeletionTimestamp() != nil {
		// A binding on its way out (the executor's finalizer withdraws the
		// template from members first) is not revived; its deletion event
		// brings the template back here to create a new one.
		return nil
	}
	in := bindingInput{
		Resource: workv1alpha2.ObjectReference{
			APIVersion: w.GVR.GroupVersion().String(), Kind: w.Kind,
			Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		},
		Fingerprint: fingerprint(m),
		Policy:      p,
		Cluster:     !w.Namespaced,
		Labels:      m.Labels,
	}
	// The fingerprint includes the customization reading the replicas, so
	// that a changed script is run again on unchanged templates.
	interp := d.opts.Interpreter
	version := interp.Version(ctx, w.GVK(), interpreter.ReplicaResource)
	if v := interp.Version(ctx, w.GVK(), interpreter.ComponentResource); v != "" {
		version += "+" + v
	}
	in.Fingerprint = withVersion(in.Fingerprint, version)
	priority, err := d.schedulePriority(ctx, p)
	if err != nil {
		d.policyApplied(w, m, p, in, err)
		return err
	}
	in.SchedulePriority = priority
	var interpretErr error
	if existing != nil && existing.GetAnnotations()[TemplateFingerprintAnnotation] == in.Fingerprint &&
		bindingSpec(existing).Resource.UID == m.UID {
		// Same template version as last time: keep what the binding says
		// about it without reading the full template again.
		spec := bindingSpec(existing)
		in.Resource.ResourceVersion = spec.Resource.ResourceVersion
		in.Workload = workload{Replicas: spec.Replicas, Requirements: spec.ReplicaRequirements, Components: spec.Components}
	} else if hasReplicas, hasComponents := interp.HasReplicas(ctx, w.GVK()), interp.HasComponents(ctx, w.GVK()); hasReplicas || hasComponents {
		if full == nil {
			// At least the version the metadata informer saw: the API
			// server answers from its watch cache instead of a quorum
			// read from etcd (every template change of a rollout reads
			// its template here).
			var err error
			full, err = d.dynamic.Resource(w.GVR).Namespace(m.Namespace).Get(ctx, m.Name, metav1.GetOptions{ResourceVersion: m.ResourceVersion})
			if apierrors.IsNotFound(err) {
				return nil // the delete event follows
			}
			if err != nil {
				return fmt.Errorf("reading %s %s: %w", w.Kind, klog.KObj(m), err)
			}
		}
		replicas, requirements, err := interp.Replicas(ctx, full)
		var components []workv1alpha2.Component
		if err == nil && hasComponents {
			components, err = interp.Components(ctx, full)
		}
		if _, ok := interpreter.AsError(err); ok {
			// The kind's script fails: the binding says so and keeps the
			// replicas it had (none for a new one, which the scheduler then
			// leaves unplaced); fixing the script runs it again.
			interpretErr = err
			if existing != nil {
				spec := bindingSpec(existing)
				replicas, requirements, components = spec.Replicas, spec.ReplicaRequirements, spec.Components
			}
		} else if err != nil {
			return err
		}
		if interpretErr == nil && requirements != nil && requirements.Namespace == "" {
			// As Karmada's detector: interpreters read a pod template,
			// which has no namespace.
			requirements.Namespace = m.Namespace
		}
		in.Workload = workload{Replicas: replicas, Requirements: requirements, Components: components}
		in.ReplicasRead = interpretErr == nil && hasReplicas
		in.Resource.UID, in.Resource.ResourceVersion = full.GetUID(), full.GetResourceVersion()
		in.Fingerprint = withVersion(fingerprint(full), version)
	} else if full != nil {
		in.Resource.UID, in.Resource.ResourceVersion = full.GetUID(), full.GetResourceVersion()
	}
	if full != nil && d.opts.Templates != nil && in.Resource.ResourceVersion == full.GetResourceVersion() {
		// The binding records this version: the executor renders it from
		// here instead of reading it again.
		d.opts.Templates.Put(bindingKey(w, m.Namespace, m.Name), full.GetResourceVersion(), full)
	}

	if existing == nil {
		obj := newBinding(!w.Namespaced)
		key := bindingKey(w, m.Namespace, m.Name)
		obj.SetName(key.Name)
		obj.SetNamespace(key.Namespace)
		meta, spec := bindingParts(obj)
		renderBinding(meta, spec, in, d.newID)
		if d.opts.BindingFinalizer != "" {
			meta.Finalizers = []string{d.opts.BindingFinalizer}
		}
		if err := d.client.Create(ctx, obj, client.FieldOwner(fieldManager)); err != nil {
			d.policyApplied(w, m, p, in, err)
			return fmt.Errorf("creating binding %s: %w", klog.KObj(obj), err)
		}
		d.created.add(key, d.clock.Now())
		bindingsWritten.WithLabelValues("create").Inc()
		d.log.V(1).Info("Binding created", "binding", klog.KObj(obj), "policy", policyRef(p))
		d.policyApplied(w, m, p, in, nil)
		return d.recordInterpretation(ctx, obj, interpretErr)
	}
	updated := copyForRender(existing)
	meta, spec := bindingParts(updated)
	renderBinding(meta, spec, in, d.newID)
	if oldMeta, oldSpec := bindingParts(existing); semantic.Equal(oldMeta, meta) && semantic.Equal(oldSpec, spec) {
		return d.recordInterpretation(ctx, updated, interpretErr)
	}
	// The write decodes the response into updated: its status becomes its
	// own first.
	*bindingkind.Status(updated) = *bindingkind.Status(existing).DeepCopy()
	patch := client.MergeFromWithOptions(existing, client.MergeFromWithOptimisticLock{})
	if err := d.client.Patch(ctx, updated, patch, client.FieldOwner(fieldManager)); err != nil {
		if !apierrors.IsConflict(err) {
			d.policyApplied(w, m, p, in, err)
		}
		return fmt.Errorf("updating binding %s: %w", klog.KObj(updated), err)
	}
	bindingsWritten.WithLabelValues("update").Inc()
	d.log.V(1).Info("Binding updated", "binding", klog.KObj(updated), "policy", policyRef(p))
	d.policyApplied(w, m, p, in, nil)
	return d.recordInterpretation(ctx, updated, interpretErr)
}

// recordInterpretation makes b's Interpreted condition say whether its
// replicaResource script failed (err), writing status only on a change.
func (d *Detector) recordInterpretation(ctx context.Context, b client.Object, err error) error {
	want := bindingkind.Status(b).DeepCopy()
	if !interpreter.RecordFailure(&want.Conditions, b.GetGeneration(), err, interpreter.ReplicaResource) {
		return nil
	}
	retry, werr := bindingkind.WriteStatus(ctx, d.client, b, want)
	if werr != nil {
		return werr
	}
	if retry > 0 {
		return fmt.Errorf("binding %s changed while its Interpreted condition was written; retrying", klog.KObj(b))
	}
	if err != nil {
		d.log.Info("Interpreter script failed", "binding", klog.KObj(b), "err", err.Error())
	}
	return nil
}

// withVersion appends the interpreter version to a fingerprint.
func withVersion(fp, version string) string {
	if version == "" {
		return fp
	}
	return fp + "+" + version
}

// releaseBinding lets a binding go when no policy claims its template any
// more. Release is not withdrawal (Karmada keeps the member objects too): the
// claim is dropped and the binding marked released, so the executor,
// scheduler and failover leave it and its member objects as they are. A
// binding whose policy asked for withdrawal (WithdrawOnReleaseAnnotation) is
// deleted instead, and an attached binding that workloads still require goes
// back to the dependencies controller.
func (d *Detector) releaseBinding(ctx context.Context, b client.Object) error {
	if b == nil || !madeByDetector(b) || b.GetDeletionTimestamp() != nil {
		return nil
	}
	if b.GetAnnotations()[policyv1alpha1.WithdrawOnReleaseAnnotation] == "true" {
		return d.deleteBinding(ctx, b)
	}
	updated := b.DeepCopyObject().(client.Object)
	meta, spec := bindingParts(updated)
	setKeys(meta.Labels, nil, claimLabels)
	setKeys(meta.Annotations, nil, claimAnnotations)
	delete(meta.Annotations, policyv1alpha1.WithdrawOnReleaseAnnotation)
	if meta.Labels[workv1alpha2.AttachedLabel] == "true" && len(spec.RequiredBy) > 0 {
		// Its requirers place it again; the policy's placement goes with
		// the claim.
		spec.Placement = nil
		delete(meta.Annotations, workv1alpha2.ReleasedAnnotation)
	} else if _, ok := meta.Annotations[workv1alpha2.ReleasedAnnotation]; !ok {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[workv1alpha2.ReleasedAnnotation] = d.clock.Now().UTC().Format(time.RFC3339)
	}
	if semantic.Equal(b, updated) {
		return nil
	}
	patch := client.MergeFromWithOptions(b, client.MergeFromWithOptimisticLock{})
	if err := d.client.Patch(ctx, updated, patch, client.FieldOwner(fieldManager)); err != nil {
		return fmt.Errorf("releasing binding %s: %w", klog.KObj(updated), err)
	}
	bindingsWritten.WithLabelValues("release").Inc()
	d.log.V(1).Info("Binding released; member objects kept", "binding", klog.KObj(updated))
	return nil
}

// deleteBinding deletes a binding the detector made (nil: nothing to do).
func (d *Detector) deleteBinding(ctx context.Context, b client.Object) error {
	if b == nil || !madeByDetector(b) || b.GetDeletionTimestamp() != nil {
		return nil
	}
	uid := b.GetUID()
	err := d.client.Delete(ctx, b, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting binding %s: %w", klog.KObj(b), err)
	}
	bindingsWritten.WithLabelValues("delete").Inc()
	d.log.V(1).Info("Binding deleted", "binding", klog.KObj(b))
	return nil
}

// getBinding reads a template's binding from the cache, nil when there is
// none.
func (d *Detector) getBinding(ctx context.Context, w *watched, ref workv1alpha2.ObjectReference) (client.Object, error) {
	obj := newBinding(!w.Namespaced)
	key := bindingKey(w, ref.Namespace, ref.Name)
	// Read only: writeBinding deep-copies before changing anything.
	err := d.client.Get(ctx, key, obj, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		if d.created.awaited(key, d.clock.Now()) {
			return nil, errCacheBehind
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading binding %s: %w", key, err)
	}
	d.created.seen(key)
	return obj, nil
}

// bindingKey is the key of the binding of template ns/name of w's kind
// (no namespace for cluster-scoped kinds).
func bindingKey(w *watched, ns, name string) types.NamespacedName {
	key := types.NamespacedName{Name: names.BindingName(w.Kind, name)}
	if w.Namespaced {
		key.Namespace = ns
	}
	return key
}

// refersTo reports whether binding b is the binding of the template ref
// (another template can map to the same binding name). The version is not
// compared: a binding follows its template to a new preferred version.
func refersTo(b client.Object, ref workv1alpha2.ObjectReference) bool {
	have := bindingSpec(b).Resource
	hgv, err := schema.ParseGroupVersion(have.APIVersion)
	if err != nil {
		return false
	}
	wgv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return hgv.Group == wgv.Group && have.Kind == ref.Kind && have.Namespace == ref.Namespace && have.Name == ref.Name
}

func newBinding(cluster bool) client.Object { return bindingkind.New(cluster) }

func bindingParts(obj client.Object) (*metav1.ObjectMeta, *workv1alpha2.ResourceBindingSpec) {
	meta, spec, _ := bindingkind.Parts(obj)
	return meta, spec
}

func bindingSpec(obj client.Object) *workv1alpha2.ResourceBindingSpec { return bindingkind.Spec(obj) }

// copyForRender is a copy of binding b for renderBinding, which changes
// only the metadata and the spec: those are deep copies, the status is
// b's, to be read only. Copying and comparing whole bindings, status and
// every member's reflected status included, was a third of the detector's time
// on unchanged templates after a restart (issue 14).
func copyForRender(b client.Object) client.Object {
	out := bindingkind.Of(b).NewObject()
	out.GetObjectKind().SetGroupVersionKind(b.GetObjectKind().GroupVersionKind())
	meta, spec, status := bindingkind.Parts(out)
	oldMeta, oldSpec, oldStatus := bindingkind.Parts(b)
	*meta, *spec, *status = *oldMeta.DeepCopy(), *oldSpec.DeepCopy(), *oldStatus
	return out
}

func policyRef(p *Policy) string {
	if p.Cluster {
		return "ClusterPropagationPolicy " + p.Name
	}
	return "PropagationPolicy " + p.Namespace + "/" + p.Name
}

// reconcilePolicy gives a policy its permanent id label when it has none.
func (d *Detector) reconcilePolicy(ctx context.Context, it item) error {
	var obj client.Object = &policyv1alpha1.PropagationPolicy{}
	label := policyv1alpha1.PropagationPolicyPermanentIDLabel
	if it.GVR == cppGVR {
		obj, label = &policyv1alpha1.ClusterPropagationPolicy{}, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	}
	err := d.client.Get(ctx, types.NamespacedName{Namespace: it.Namespace, Name: it.Name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if obj.GetLabels()[label] != "" || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[label] = d.newID()
	obj.SetLabels(labels)
	patch := client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	if err := d.client.Patch(ctx, obj, patch, client.FieldOwner(fieldManager)); err != nil {
		return fmt.Errorf("labelling policy %s with a permanent id: %w", klog.KObj(obj), err)
	}
	policiesLabelled.Inc()
	return nil
}
