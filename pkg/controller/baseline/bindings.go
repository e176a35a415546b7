package baseline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// bindingsOf are the bindings the generated policy claims, namespaced and
// cluster-scoped.
func (r *reconciler) bindingsOf(ctx context.Context, policy string) ([]client.Object, error) {
	var out []client.Object
	for _, list := range []client.ObjectList{&workv1alpha2.ResourceBindingList{}, &workv1alpha2.ClusterResourceBindingList{}} {
		if err := r.client.List(ctx, list, client.MatchingFields{indexer.BaselinePolicy: policy}); err != nil {
			return nil, fmt.Errorf("listing the bindings of policy %s: %w", policy, err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, it.(client.Object))
		}
	}
	return out, nil
}

// observeBindings fills c.on from the component's bindings: per cluster,
// whether it is placed, still present, ready at the current version, held
// for prerequisites, failed. The component is ready on a cluster only when
// every one of its bindings is.
func observeBindings(c *component, bindings []client.Object) {
	c.bindings = len(bindings)
	c.on = map[string]observed{}
	per := make([]map[string]observed, len(bindings))
	for i, b := range bindings {
		per[i] = observeBinding(b)
		for cl := range per[i] {
			c.on[cl] = observed{}
		}
	}
	for cl := range c.on {
		o := observed{ready: true}
		for _, m := range per {
			bo, ok := m[cl]
			o.ready = o.ready && ok && bo.ready
			o.placed = o.placed || bo.placed
			o.present = o.present || bo.present
			o.held = o.held || bo.held
			if o.failed == "" {
				o.failed = bo.failed
			}
			if o.message == "" {
				o.message = bo.message
			}
		}
		c.on[cl] = o
	}
}

// observeBinding is one binding's view of each cluster it reaches.
func observeBinding(b client.Object) map[string]observed {
	m, spec, status := bindingkind.Parts(b)
	allowed := allowedOf(m.Annotations)
	// A status older than the template version says nothing about it; one
	// older only than this controller's placement writes still does.
	current := bindingkind.ExecutorSynced(status, versionGeneration(m.Annotations, spec.Resource.ResourceVersion, m.Generation))
	what := spec.Resource.Kind + " " + refString(spec.Resource)
	out := map[string]observed{}
	for _, t := range spec.Clusters {
		out[t.Name] = observed{placed: true, present: true, held: allowed[t.Name] != spec.Resource.ResourceVersion,
			message: what + ": waiting for the executor"}
	}
	for _, item := range status.AggregatedStatus {
		o, placed := out[item.ClusterName]
		o.present = true
		if !placed {
			out[item.ClusterName] = o // withdrawal pending
			continue
		}
		msg := strings.TrimPrefix(item.AppliedMessage, "not ready: ")
		o.ready = current && item.Applied && item.Health == workv1alpha2.ResourceHealthy
		switch {
		case o.ready:
			o.message = ""
		case item.Health == workv1alpha2.ResourceUnhealthy:
			o.failed = what + ": " + msg
		case current && msg != "":
			o.message = what + ": " + msg
		}
		out[item.ClusterName] = o
	}
	return out
}

func refString(ref workv1alpha2.ObjectReference) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// versionGeneration is the binding generation from which a status
// describes template version rv: the one recorded with rv, or the current
// generation when rv is not recorded yet (conservative).
func versionGeneration(annotations map[string]string, rv string, generation int64) int64 {
	recorded, gen, ok := strings.Cut(annotations[appsv1alpha1.TemplateVersionAnnotation], "/")
	if !ok || recorded != rv {
		return generation
	}
	g, err := strconv.ParseInt(gen, 10, 64)
	if err != nil || g > generation {
		return generation
	}
	return g
}

// templateVersion is the TemplateVersionAnnotation value to keep.
func templateVersion(annotations map[string]string, rv string, generation int64) string {
	return rv + "/" + strconv.FormatInt(versionGeneration(annotations, rv, generation), 10)
}

// allowedOf reads a binding's allowed revisions (cluster → template
// resourceVersion); nil when absent or unparsable.
func allowedOf(annotations map[string]string) map[string]string {
	var m map[string]string
	_ = json.Unmarshal([]byte(annotations[appsv1alpha1.AllowedRevisionsAnnotation]), &m)
	return m
}

// writeBinding places a component binding on the decided clusters and
// allows each placed cluster the current template version when its
// prerequisites are ready (else the version it had); it writes only what
// differs.
func (r *reconciler) writeBinding(ctx context.Context, cb *appsv1alpha1.ClusterBaseline, component, expression string, active bool, b client.Object, decisions map[string]decision) error {
	m, spec, _ := bindingkind.Parts(b)
	allowed := allowedOf(m.Annotations)
	var targets []workv1alpha2.TargetCluster
	want := map[string]string{}
	for cl, d := range decisions {
		if !d.place {
			continue
		}
		targets = append(targets, workv1alpha2.TargetCluster{Name: cl, Replicas: spec.Replicas})
		switch {
		case d.allow:
			want[cl] = spec.Resource.ResourceVersion
		case allowed[cl] != "":
			want[cl] = allowed[cl]
		}
	}
	slices.SortFunc(targets, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	encoded, _ := json.Marshal(want) // a map of strings always marshals; keys sorted
	annotations := map[string]string{
		appsv1alpha1.ComponentAnnotation:        component,
		appsv1alpha1.AllowedRevisionsAnnotation: string(encoded),
		appsv1alpha1.TemplateVersionAnnotation:  templateVersion(m.Annotations, spec.Resource.ResourceVersion, m.Generation),
	}
	if active {
		annotations[appsv1alpha1.ReadinessAnnotation] = expression
	}
	changed := !semantic.Equal(spec.Clusters, targets) || m.Labels[appsv1alpha1.BaselineLabel] != cb.Name
	for k, v := range annotations {
		changed = changed || m.Annotations[k] != v
	}
	if !changed {
		return nil
	}
	orig := b.DeepCopyObject().(client.Object)
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[appsv1alpha1.BaselineLabel] = cb.Name
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	for k, v := range annotations {
		if v == "" && k == appsv1alpha1.ReadinessAnnotation {
			delete(m.Annotations, k)
			continue
		}
		m.Annotations[k] = v
	}
	spec.Clusters = targets
	if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("placing binding %s of baseline %s: %w", client.ObjectKeyFromObject(b), cb.Name, err)
	}
	return nil
}

// blockedReason says why a component with missing bindings cannot be
// delivered: a selected template claimed by another policy (reported, not
// fought over), or no template selected yet. Templates are read live, and
// only for selectors whose binding is missing.
func (r *reconciler) blockedReason(ctx context.Context, c *appsv1alpha1.BaselineComponent, policy *policyv1alpha1.ClusterPropagationPolicy, bindings []client.Object) string {
	have := map[types.NamespacedName]bool{}
	for _, b := range bindings {
		have[client.ObjectKeyFromObject(b)] = true
	}
	for _, s := range c.ResourceSelectors {
		if s.Name == "" && len(bindings) > 0 {
			continue // a label selector already matched something
		}
		if s.Name != "" && have[types.NamespacedName{Namespace: s.Namespace, Name: names.BindingName(s.Kind, s.Name)}] {
			continue
		}
		gv, err := schema.ParseGroupVersion(s.APIVersion)
		if err != nil {
			return fmt.Sprintf("resourceSelector %s %s: %v", s.APIVersion, s.Kind, err)
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gv.WithKind(s.Kind + "List"))
		var items []metav1.PartialObjectMetadata
		if s.Name != "" {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(gv.WithKind(s.Kind))
			err = r.reader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, m)
			if err == nil {
				items = append(items, *m)
			}
		} else {
			opts := []client.ListOption{client.InNamespace(s.Namespace)}
			if s.LabelSelector != nil {
				sel, serr := metav1.LabelSelectorAsSelector(s.LabelSelector)
				if serr != nil {
					return fmt.Sprintf("resourceSelector %s %s: %v", s.APIVersion, s.Kind, serr)
				}
				opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
			}
			err = r.reader.List(ctx, list, opts...)
			items = list.Items
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Sprintf("reading %s %s: %v", s.Kind, selectorString(s), err)
		}
		for _, m := range items {
			if by := claimedElsewhere(&m, policy); by != "" {
				return fmt.Sprintf("%s %s is claimed by %s; the baseline does not take it over", s.Kind, refOf(&m), by)
			}
		}
	}
	return ""
}

// claimedElsewhere names the policy that claims a template, when it is not
// the baseline's own.
func claimedElsewhere(m *metav1.PartialObjectMetadata, own *policyv1alpha1.ClusterPropagationPolicy) string {
	if name := m.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; name != "" && m.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "" {
		return "PropagationPolicy " + m.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] + "/" + name
	}
	if name := m.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" && (own == nil || name != own.Name) {
		return "ClusterPropagationPolicy " + name
	}
	return ""
}

func refOf(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

func selectorString(s policyv1alpha1.ResourceSelector) string {
	switch {
	case s.Name != "":
		return refString(workv1alpha2.ObjectReference{Namespace: s.Namespace, Name: s.Name})
	case s.LabelSelector != nil:
		return metav1.FormatLabelSelector(s.LabelSelector)
	}
	return "(all)"
}
