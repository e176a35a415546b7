package detector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// workload is what a binding records about a template's replicas.
type workload struct {
	Replicas     int32
	Requirements *workv1alpha2.ReplicaRequirements
	// Components of a multi-component workload (nil for others).
	Components []workv1alpha2.Component
}

// bindingInput is what a binding is rendered from.
type bindingInput struct {
	// Resource references the template, with the uid and resourceVersion of
	// the version the binding describes.
	Resource workv1alpha2.ObjectReference
	// Fingerprint of that template version.
	Fingerprint string
	Workload    workload
	// ReplicasRead: Workload was read from the template this time (not
	// kept from the binding).
	ReplicasRead bool
	Policy       *Policy
	// SchedulePriority is the policy's schedulePriority resolved to its
	// PriorityClass's value (nil: none).
	SchedulePriority *workv1alpha2.SchedulePriority
	// Cluster is true for a ClusterResourceBinding (cluster-scoped
	// template).
	Cluster bool
	// Labels are the template's labels (placement.workloadAffinity groups
	// workloads by one of them).
	Labels map[string]string
}

// renderBinding makes meta and spec carry what the detector owns for in,
// leaving what others own alone: spec.clusters (scheduler),
// gracefulEvictionTasks, requiredBy, rescheduleTriggeredAt,
// suspension.scheduling, status,
// and labels, annotations and owner references the detector does not set.
// newID makes the binding's permanent id when it has none yet.
func renderBinding(meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, in bindingInput, newID func() string) {
	idLabel := workv1alpha2.ResourceBindingPermanentIDLabel
	if in.Cluster {
		idLabel = workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	if meta.Labels[idLabel] == "" {
		meta.Labels[idLabel] = newID()
	}
	wantLabels, wantAnnotations := claimMetadata(in.Policy)
	setKeys(meta.Labels, wantLabels, claimLabels)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	setKeys(meta.Annotations, wantAnnotations, claimAnnotations)
	if in.Policy.AutoProvision {
		meta.Labels[workv1alpha2.NamespaceAutoProvisionLabel] = "true"
	} else {
		delete(meta.Labels, workv1alpha2.NamespaceAutoProvisionLabel)
	}
	// Claimed (again): no longer released; the policy's withdrawal opt-in
	// travels with the binding so that it still counts once the policy is
	// gone.
	delete(meta.Annotations, workv1alpha2.ReleasedAnnotation)
	if in.Policy.WithdrawOnRelease {
		meta.Annotations[policyv1alpha1.WithdrawOnReleaseAnnotation] = "true"
	} else {
		delete(meta.Annotations, policyv1alpha1.WithdrawOnReleaseAnnotation)
	}
	meta.Annotations[TemplateFingerprintAnnotation] = in.Fingerprint
	meta.OwnerReferences = withController(meta.OwnerReferences, metav1.OwnerReference{
		APIVersion:         in.Resource.APIVersion,
		Kind:               in.Resource.Kind,
		Name:               in.Resource.Name,
		UID:                in.Resource.UID,
		Controller:         new(true),
		BlockOwnerDeletion: new(false),
	})

	ps := in.Policy.Spec
	spec.Resource = in.Resource
	spec.Replicas = in.Workload.Replicas
	spec.ReplicaRequirements = in.Workload.Requirements.DeepCopy()
	spec.Components = nil
	for i := range in.Workload.Components {
		spec.Components = append(spec.Components, *in.Workload.Components[i].DeepCopy())
	}
	spec.PropagateDeps = ps.PropagateDeps
	spec.Placement = ps.Placement.DeepCopy()
	spec.SchedulerName = ps.SchedulerName
	spec.Failover = ps.Failover.DeepCopy()
	spec.ConflictResolution = ps.ConflictResolution
	if spec.ConflictResolution == "" {
		// The binding's schema defaults it (a policy from the API server
		// has it defaulted too; the built-in namespace auto-provision has
		// not): render what the API server stores, or every reconcile sends
		// a patch removing it that the server undoes, changing nothing.
		spec.ConflictResolution = policyv1alpha1.ConflictAbort
	}
	spec.PreserveResourcesOnDeletion = copyBool(ps.PreserveResourcesOnDeletion)
	spec.Suspension = suspension(ps.Suspension, spec.Suspension)
	spec.SchedulePriority = in.SchedulePriority.DeepCopy()
	spec.WorkloadAffinityGroups = nil
	if !in.Cluster {
		spec.WorkloadAffinityGroups = affinityGroups(ps.Placement.WorkloadAffinity, in.Labels)
	}
}

// affinityGroups resolves placement.workloadAffinity against the
// template's labels, as Karmada's detector does: each term whose label the
// template carries names a group "<key>=<value>"; nil when none does.
// ClusterResourceBindings get none (groups are namespaced).
func affinityGroups(wa *policyv1alpha1.WorkloadAffinity, labels map[string]string) *workv1alpha2.WorkloadAffinityGroups {
	if wa == nil {
		return nil
	}
	var g workv1alpha2.WorkloadAffinityGroups
	if wa.Affinity != nil {
		if v, ok := labels[wa.Affinity.GroupByLabelKey]; ok {
			g.AffinityGroup = wa.Affinity.GroupByLabelKey + "=" + v
		}
	}
	if wa.AntiAffinity != nil {
		if v, ok := labels[wa.AntiAffinity.GroupByLabelKey]; ok {
			g.AntiAffinityGroup = wa.AntiAffinity.GroupByLabelKey + "=" + v
		}
	}
	if g == (workv1alpha2.WorkloadAffinityGroups{}) {
		return nil
	}
	return &g
}

// suspension is the policy's suspension with the binding's own
// suspension.scheduling (not a policy field) kept.
func suspension(policy *policyv1alpha1.Suspension, have *workv1alpha2.Suspension) *workv1alpha2.Suspension {
	var scheduling *bool
	if have != nil {
		scheduling = copyBool(have.Scheduling)
	}
	if policy == nil && scheduling == nil {
		return nil
	}
	s := &workv1alpha2.Suspension{Scheduling: scheduling}
	if policy != nil {
		s.Suspension = *policy.DeepCopy()
	}
	return s
}

// setKeys makes the managed keys of m equal want's.
func setKeys(m, want map[string]string, managed []string) {
	for _, k := range managed {
		if v, ok := want[k]; ok {
			m[k] = v
		} else {
			delete(m, k)
		}
	}
}

// withController replaces the controller reference in refs by ref (in
// place, so unchanged references keep their order) or appends it; other
// references are kept.
func withController(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	placed := false
	for _, r := range refs {
		isController := r.Controller != nil && *r.Controller
		switch {
		case isController && !placed:
			out = append(out, ref)
			placed = true
		case isController, r.UID == ref.UID:
			// A second controller, or a non-controller copy of ours: drop.
		default:
			out = append(out, r)
		}
	}
	if !placed {
		out = append(out, ref)
	}
	return out
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
