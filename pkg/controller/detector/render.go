package detector

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	resourcehelper "k8s.io/component-helpers/resource"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// workload is what a binding records about a template's replicas.
type workload struct {
	Replicas     int32
	Requirements *workv1alpha2.ReplicaRequirements
}

var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetGK  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	podGK         = schema.GroupKind{Kind: "Pod"}
)

// isWorkload reports whether the binding of a gk template carries replicas
// and replica requirements, which need the full template (the detector only
// caches metadata). These are Karmada's native replica interpreters.
func isWorkload(gk schema.GroupKind) bool {
	switch gk {
	case deploymentGK, statefulSetGK, replicaSetGK, jobGK, podGK:
		return true
	}
	return false
}

// interpretWorkload reads replicas and the requirements of one replica from
// a full template, as Karmada's native interpreter: spec.replicas of
// Deployments, StatefulSets and ReplicaSets, spec.parallelism of Jobs, 1 for
// a Pod; the requirements come from the pod template.
func interpretWorkload(gk schema.GroupKind, obj *unstructured.Unstructured) (workload, error) {
	var replicas *int32
	var podSpec *corev1.PodSpec
	switch gk {
	case deploymentGK:
		o := &appsv1.Deployment{}
		if err := fromUnstructured(obj, o); err != nil {
			return workload{}, err
		}
		replicas, podSpec = o.Spec.Replicas, &o.Spec.Template.Spec
	case statefulSetGK:
		o := &appsv1.StatefulSet{}
		if err := fromUnstructured(obj, o); err != nil {
			return workload{}, err
		}
		replicas, podSpec = o.Spec.Replicas, &o.Spec.Template.Spec
	case replicaSetGK:
		o := &appsv1.ReplicaSet{}
		if err := fromUnstructured(obj, o); err != nil {
			return workload{}, err
		}
		replicas, podSpec = o.Spec.Replicas, &o.Spec.Template.Spec
	case jobGK:
		o := &batchv1.Job{}
		if err := fromUnstructured(obj, o); err != nil {
			return workload{}, err
		}
		replicas, podSpec = o.Spec.Parallelism, &o.Spec.Template.Spec
	case podGK:
		o := &corev1.Pod{}
		if err := fromUnstructured(obj, o); err != nil {
			return workload{}, err
		}
		one := int32(1)
		replicas, podSpec = &one, &o.Spec
	default:
		return workload{}, nil
	}
	w := workload{Requirements: replicaRequirements(podSpec)}
	if replicas != nil {
		w.Replicas = *replicas
	}
	return w, nil
}

func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// replicaRequirements are the resources one replica requests (the
// Kubernetes effective pod request: containers summed, init containers as
// their maximum, sidecars and pod overhead included) and its hard node
// constraints (Karmada's nodeClaim). nil when there are neither.
func replicaRequirements(spec *corev1.PodSpec) *workv1alpha2.ReplicaRequirements {
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{})
	if len(requests) == 0 {
		requests = nil
	}
	claim := nodeClaim(spec)
	if requests == nil && claim == nil {
		return nil
	}
	return &workv1alpha2.ReplicaRequirements{NodeClaim: claim, ResourceRequest: requests}
}

func nodeClaim(spec *corev1.PodSpec) *workv1alpha2.NodeClaim {
	claim := &workv1alpha2.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(claim.NodeSelector) == 0 && len(claim.Tolerations) == 0 && claim.HardNodeAffinity == nil {
		return nil
	}
	return claim
}

// bindingInput is what a binding is rendered from.
type bindingInput struct {
	// Resource references the template, with the uid and resourceVersion of
	// the version the binding describes.
	Resource workv1alpha2.ObjectReference
	// Fingerprint of that template version.
	Fingerprint string
	Workload    workload
	Policy      *Policy
	// Cluster is true for a ClusterResourceBinding (cluster-scoped
	// template).
	Cluster bool
}

// renderBinding makes meta and spec carry what the detector owns for in,
// leaving what others own alone: spec.clusters (scheduler),
// gracefulEvictionTasks, requiredBy, rescheduleTriggeredAt, components,
// schedulePriority, workloadAffinityGroups, suspension.scheduling, status,
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
	spec.PropagateDeps = ps.PropagateDeps
	spec.Placement = ps.Placement.DeepCopy()
	spec.SchedulerName = ps.SchedulerName
	spec.Failover = ps.Failover.DeepCopy()
	spec.ConflictResolution = ps.ConflictResolution
	spec.PreserveResourcesOnDeletion = copyBool(ps.PreserveResourcesOnDeletion)
	spec.Suspension = suspension(ps.Suspension, spec.Suspension)
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
