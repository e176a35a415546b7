package manager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/intern"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// bindingTransform is the manager cache's transform for ResourceBindings
// and ClusterResourceBindings: managedFields dropped (as for every cached
// object), then the strings that bindings repeat shared through
// intern.Default. The cache hands readers deep copies, so sharing is
// invisible to them; event handlers get the cached object and must not
// change it, as with any informer.
func bindingTransform(obj any) (any, error) {
	var meta *metav1.ObjectMeta
	var spec *workv1alpha2.ResourceBindingSpec
	var status *workv1alpha2.ResourceBindingStatus
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		meta, spec, status = &b.ObjectMeta, &b.Spec, &b.Status
		b.TypeMeta = internTypeMeta(b.TypeMeta)
	case *workv1alpha2.ClusterResourceBinding:
		meta, spec, status = &b.ObjectMeta, &b.Spec, &b.Status
		b.TypeMeta = internTypeMeta(b.TypeMeta)
	default:
		return obj, nil
	}
	t := intern.Default
	meta.ManagedFields = nil
	meta.Namespace = t.String(meta.Namespace)
	meta.Labels = t.Map(meta.Labels, names.RepeatedValue)
	meta.Annotations = t.Map(meta.Annotations, names.RepeatedValue)
	for i := range meta.Finalizers {
		meta.Finalizers[i] = t.String(meta.Finalizers[i])
	}
	for i := range meta.OwnerReferences {
		o := &meta.OwnerReferences[i]
		o.APIVersion, o.Kind = t.String(o.APIVersion), t.String(o.Kind)
	}

	r := &spec.Resource
	r.APIVersion, r.Kind, r.Namespace = t.String(r.APIVersion), t.String(r.Kind), t.String(r.Namespace)
	spec.SchedulerName = t.String(spec.SchedulerName)
	spec.ConflictResolution = policyv1alpha1.ConflictResolution(t.String(string(spec.ConflictResolution)))
	for i := range spec.Clusters {
		spec.Clusters[i].Name = t.String(spec.Clusters[i].Name)
	}
	// A policy's placement and failover behaviour are copied into every
	// binding it claims, and workloads of one shape have the same replica
	// requirements: equal ones share one copy (design 0013, decision 35).
	// Share only reads what it is given, so a transform run twice (client-go's
	// streaming list) writes nothing into a value already shared.
	spec.Placement = placements.Share(spec.Placement)
	spec.Failover = failovers.Share(spec.Failover)
	spec.ReplicaRequirements = requirements.Share(spec.ReplicaRequirements)

	for i := range status.Conditions {
		c := &status.Conditions[i]
		c.Type, c.Reason, c.Message = t.String(c.Type), t.String(c.Reason), t.String(c.Message)
		c.Status = metav1.ConditionStatus(t.String(string(c.Status)))
	}
	for i := range status.AggregatedStatus {
		a := &status.AggregatedStatus[i]
		a.ClusterName = t.String(a.ClusterName)
		a.Health = workv1alpha2.ResourceHealth(t.String(string(a.Health)))
		a.AppliedMessage = t.String(a.AppliedMessage)
	}
	return obj, nil
}

// The manager cache's shared binding parts: 1,024 slots each, room for
// the distinct placements and requirement shapes of a large federation;
// past that, a value that repeats is shared again from its next
// occurrence.
var (
	placements   = intern.NewValues[policyv1alpha1.Placement](1 << 10)
	failovers    = intern.NewValues[policyv1alpha1.FailoverBehavior](1 << 10)
	requirements = intern.NewValues[workv1alpha2.ReplicaRequirements](1 << 10)
)

func internTypeMeta(tm metav1.TypeMeta) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: intern.Default.String(tm.APIVersion), Kind: intern.Default.String(tm.Kind)}
}
