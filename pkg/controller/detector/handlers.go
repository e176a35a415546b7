package detector

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/tenancy"
)

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdsGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// skipped reports whether a template is in a skipped namespace (or is a
// Namespace object of a skipped name), or is the CustomResourceDefinition
// of one of the federation's own APIs.
func (d *Detector) skipped(w *watched, m metav1.Object) bool {
	switch w.GVR {
	case namespacesGVR:
		return namespaceSkipped(d.opts.SkippedNamespaces, m.GetName())
	case crdsGVR:
		return federationCRD(m.GetName())
	}
	return namespaceSkipped(d.opts.SkippedNamespaces, m.GetNamespace())
}

// templateHandler enqueues a template when it is created, deleted or
// changed in a way that matters: its fingerprint (generation, labels,
// annotations), its claim metadata or its deletion state. Status-only
// updates are dropped here.
func (d *Detector) templateHandler(w *watched) toolscache.ResourceEventHandler {
	enqueue := func(m metav1.Object, priority int) {
		if d.skipped(w, m) {
			return
		}
		d.enqueue(priority, item{GVR: w.GVR, Namespace: m.GetNamespace(), Name: m.GetName()})
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if m, ok := obj.(metav1.Object); ok {
				priority := freshPriority
				if initial {
					priority = lowPriority
				}
				enqueue(m, priority)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(metav1.Object)
			n, ok2 := newObj.(metav1.Object)
			if ok1 && ok2 && templateChanged(o, n) {
				enqueue(n, freshPriority)
			}
		},
		DeleteFunc: func(obj any) {
			if m := objectOf(obj); m != nil {
				enqueue(m, freshPriority)
			}
		},
	}
}

// templateChanged reports whether an update can change the template's
// binding or claim.
func templateChanged(o, n metav1.Object) bool {
	if (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) {
		return true
	}
	for _, k := range claimLabels {
		if o.GetLabels()[k] != n.GetLabels()[k] {
			return true
		}
	}
	for _, k := range claimAnnotations {
		if o.GetAnnotations()[k] != n.GetAnnotations()[k] {
			return true
		}
	}
	return fingerprint(o) != fingerprint(n)
}

// objectOf unwraps delete tombstones.
func objectOf(obj any) metav1.Object {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}

// policyOf converts a cached PropagationPolicy or ClusterPropagationPolicy
// (or a tombstone of one); the result shares the cached spec, read only.
func policyOf(obj any) *Policy {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return &Policy{
			Namespace: p.Namespace, Name: p.Name,
			PermanentID: p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel],
			Deleting:    p.DeletionTimestamp != nil, Spec: &p.Spec,
			WithdrawOnRelease: p.Annotations[policyv1alpha1.WithdrawOnReleaseAnnotation] == "true",
			Tenant:            p.Annotations[tenancyv1alpha1.TenantAnnotation],
		}
	case *policyv1alpha1.ClusterPropagationPolicy:
		return &Policy{
			Cluster: true, Name: p.Name,
			PermanentID: p.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel],
			Deleting:    p.DeletionTimestamp != nil, Spec: &p.Spec,
			WithdrawOnRelease: p.Annotations[policyv1alpha1.WithdrawOnReleaseAnnotation] == "true",
		}
	}
	return nil
}

func policyItem(p *Policy) item {
	if p.Cluster {
		return item{GVR: cppGVR, Name: p.Name}
	}
	return item{GVR: ppGVR, Namespace: p.Namespace, Name: p.Name}
}

// policyHandler labels policies with a permanent id and re-evaluates the
// templates a policy change can affect: on creation (and when the policy
// first gets its permanent id, which is when it can claim), on deletion, and
// on updates of the spec or labels, except for policies with
// activationPreference Lazy, whose creation and updates reach a template
// only when the template itself next changes (their deletion releases at
// once). Policies of the initial list re-evaluate
// nothing: every template is evaluated from its own initial list.
func (d *Detector) policyHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			p := policyOf(obj)
			if p == nil {
				return
			}
			if p.PermanentID == "" {
				d.enqueue(freshPriority, policyItem(p))
				return
			}
			if !initial && !lazy(p) {
				d.enqueueForPolicy(p)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := policyOf(oldObj), policyOf(newObj)
			if o == nil || n == nil {
				return
			}
			if n.PermanentID == "" {
				d.enqueue(freshPriority, policyItem(n))
			}
			switch {
			case o.PermanentID == "" && lazy(n):
				// A Lazy policy's creation (it can claim once it has its
				// id) reaches the templates it matches when they next
				// change, as in Karmada.
			case o.PermanentID != n.PermanentID:
				d.enqueueForPolicy(o)
				d.enqueueForPolicy(n)
			case o.Deleting != n.Deleting:
				d.enqueueForPolicy(n)
			case lazy(n):
			case policyChanged(oldObj, newObj):
				d.enqueueForPolicy(n)
			}
		},
		DeleteFunc: func(obj any) {
			if p := policyOf(obj); p != nil {
				p.Deleting = true
				d.enqueueForPolicy(p)
			}
		},
	}
}

func lazy(p *Policy) bool { return p.Spec.ActivationPreference == policyv1alpha1.LazyActivation }

// policyChanged: a spec change bumps the generation (policies have no
// status); labels can be matched by nothing here, but are cheap to compare;
// the tenant record decides what the policy may claim in a shared
// namespace.
func policyChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(metav1.Object)
	n, ok2 := newObj.(metav1.Object)
	return ok1 && ok2 && (o.GetGeneration() != n.GetGeneration() || !maps.Equal(o.GetLabels(), n.GetLabels()) ||
		o.GetAnnotations()[tenancyv1alpha1.TenantAnnotation] != n.GetAnnotations()[tenancyv1alpha1.TenantAnnotation])
}

// tenantHandler re-evaluates the templates of the namespaces a Tenant
// lists (before and after a change): what its policies may claim there
// may have changed. Tenants of the initial list change nothing.
func (d *Detector) tenantHandler() toolscache.ResourceEventHandler {
	enqueue := func(objs ...any) {
		for i, obj := range objs {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				objs[i] = t.Obj
			}
		}
		namespaces := tenancy.NamespacesOf(objs...)
		d.mu.RLock()
		defer d.mu.RUnlock()
		var items []item
		for ns := range namespaces {
			for _, w := range d.resources {
				if !w.Namespaced {
					continue
				}
				objs, _ := w.informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, ns)
				for _, obj := range objs {
					if m, ok := obj.(metav1.Object); ok && !d.skipped(w, m) {
						items = append(items, item{GVR: w.GVR, Namespace: m.GetNamespace(), Name: m.GetName()})
					}
				}
			}
		}
		if len(items) > 0 {
			d.log.V(1).Info("Re-evaluating templates for a tenant change", "templates", len(items))
			d.enqueue(freshPriority, items...)
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				enqueue(obj)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*tenancyv1alpha1.Tenant)
			n, ok2 := newObj.(*tenancyv1alpha1.Tenant)
			if ok1 && ok2 && o.Generation == n.Generation {
				return // status only
			}
			enqueue(oldObj, newObj)
		},
		DeleteFunc: func(obj any) { enqueue(obj) },
	}
}

// enqueueForPolicy enqueues the templates p claims and those it matches.
func (d *Detector) enqueueForPolicy(p *Policy) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var items []item
	add := func(w *watched, obj any) {
		if m, ok := obj.(metav1.Object); ok && !d.skipped(w, m) {
			items = append(items, item{GVR: w.GVR, Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	}
	if p.PermanentID != "" {
		for _, w := range d.resources {
			objs, _ := w.informer.GetIndexer().ByIndex(claimIndex, p.PermanentID)
			for _, obj := range objs {
				add(w, obj)
			}
		}
	}
	if !p.Deleting {
		for _, s := range p.Spec.ResourceSelectors {
			gv, err := schema.ParseGroupVersion(s.APIVersion)
			if err != nil {
				continue
			}
			w := d.byGK[gv.WithKind(s.Kind).GroupKind()]
			if w == nil || (!p.Cluster && !w.Namespaced) {
				continue
			}
			var objs []any
			if p.Cluster {
				objs = w.informer.GetIndexer().List()
			} else {
				objs, _ = w.informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, p.Namespace)
			}
			for _, obj := range objs {
				m, ok := obj.(metav1.Object)
				if ok && PolicyPriority(templateOf(w, m), p) > PriorityMisMatch {
					add(w, obj)
				}
			}
		}
	}
	if len(items) > 0 {
		d.log.V(1).Info("Re-evaluating templates for policy", "cluster", p.Cluster, "namespace", p.Namespace, "name", p.Name, "templates", len(items))
		d.enqueue(freshPriority, items...)
	}
}

func templateOf(w *watched, m metav1.Object) Template {
	return Template{
		APIVersion: w.GVR.GroupVersion().String(), Kind: w.Kind,
		Namespace: m.GetNamespace(), Name: m.GetName(), Labels: m.GetLabels(),
	}
}

// bindingHandler maps bindings the detector made back to their templates:
// on the initial list (so bindings whose template was deleted while the
// detector was down are removed) and on deletion (so a binding deleted by
// hand comes back while its template is claimed). On the initial list a
// template its informer holds is left alone: its own initial event has
// queued it. Queueing it again cost a restart of 100,000 templates another
// 100,000 adds to the queue after the detector was ready, and a template
// created then waited seconds behind them (design 0013, decision 29).
func (d *Detector) bindingHandler() toolscache.ResourceEventHandler {
	enqueue := func(obj any, priority int, initial bool) {
		m := objectOf(obj)
		if m == nil || !madeByDetector(m) {
			return
		}
		var ref *workv1alpha2.ObjectReference
		switch b := obj.(type) {
		case *workv1alpha2.ResourceBinding:
			ref = &b.Spec.Resource
		case *workv1alpha2.ClusterResourceBinding:
			ref = &b.Spec.Resource
		case toolscache.DeletedFinalStateUnknown:
			switch b := b.Obj.(type) {
			case *workv1alpha2.ResourceBinding:
				ref = &b.Spec.Resource
			case *workv1alpha2.ClusterResourceBinding:
				ref = &b.Spec.Resource
			}
		}
		if ref == nil {
			return
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return
		}
		w := d.watchedGK(gv.WithKind(ref.Kind).GroupKind())
		if w == nil {
			return
		}
		it := item{GVR: w.GVR, Namespace: ref.Namespace, Name: ref.Name}
		if initial {
			// Held, whether or not the informer has synced: the handler
			// has had, or will have, the template's add event.
			if _, exists, _ := w.informer.GetStore().GetByKey(it.key()); exists {
				return
			}
		}
		d.enqueue(priority, it)
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if initial {
				enqueue(obj, lowPriority, true)
				return
			}
			// A binding the detector created is no longer awaited once
			// the cache has it (its template may not be read again).
			if m := objectOf(obj); m != nil {
				d.created.seen(types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
			}
		},
		DeleteFunc: func(obj any) { enqueue(obj, freshPriority, false) },
	}
}

// madeByDetector: the detector labels the bindings it makes with the
// claiming policy's permanent id (or as a namespace's auto-provision), and
// marks them released when no policy claims them any more. Other bindings (for example made for dependencies)
// are never deleted by the detector.
func madeByDetector(m metav1.Object) bool {
	if _, ok := m.GetAnnotations()[workv1alpha2.ReleasedAnnotation]; ok {
		return true
	}
	if m.GetLabels()[workv1alpha2.NamespaceAutoProvisionLabel] == "true" {
		return true
	}
	for _, k := range claimLabels {
		if m.GetLabels()[k] != "" {
			return true
		}
	}
	return false
}

// customizationHandler re-reads the templates of a customization's target
// kind when the customization changes: their replicas may read differently
// now (the fingerprint includes the customization's version).
func (d *Detector) customizationHandler() toolscache.ResourceEventHandler {
	enqueue := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		ric, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
		if !ok {
			return
		}
		gv, err := schema.ParseGroupVersion(ric.Spec.Target.APIVersion)
		if err != nil {
			return
		}
		w := d.watchedGK(gv.WithKind(ric.Spec.Target.Kind).GroupKind())
		if w == nil {
			return
		}
		for _, key := range w.informer.GetStore().ListKeys() {
			ns, name, err := toolscache.SplitMetaNamespaceKey(key)
			if err == nil {
				d.enqueue(lowPriority, item{GVR: w.GVR, Namespace: ns, Name: name})
			}
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}
