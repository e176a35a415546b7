package v1alpha1

// Labels and annotations that record which policy claimed a resource
// template. The keys are Karmada's, so tools written for Karmada can read
// them.
const (
	// PropagationPolicyPermanentIDLabel holds the permanent ID of the
	// PropagationPolicy that claimed a resource template.
	PropagationPolicyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id"

	// ClusterPropagationPolicyPermanentIDLabel holds the permanent ID of the
	// ClusterPropagationPolicy that claimed a resource template.
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"

	// PropagationPolicyNamespaceAnnotation holds the namespace of the claiming
	// PropagationPolicy.
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"

	// PropagationPolicyNameAnnotation holds the name of the claiming
	// PropagationPolicy.
	PropagationPolicyNameAnnotation = "propagationpolicy.karmada.io/name"

	// ClusterPropagationPolicyAnnotation holds the name of the claiming
	// ClusterPropagationPolicy.
	ClusterPropagationPolicyAnnotation = "clusterpropagationpolicy.karmada.io/name"

	// NamespaceSkipAutoPropagationLabel on a Namespace stops it from being
	// propagated to every cluster automatically.
	NamespaceSkipAutoPropagationLabel = "namespace.karmada.io/skip-auto-propagation"

	// WithdrawOnReleaseAnnotation ("true") on a PropagationPolicy or
	// ClusterPropagationPolicy opts its templates into withdrawal when the
	// policy lets them go (deleted, or no longer selecting them): their
	// bindings are deleted and the member objects removed. Without it a
	// released template keeps running in the members, as in Karmada. atoll's
	// addition.
	WithdrawOnReleaseAnnotation = "atoll.dev/withdraw-on-release"

	// WhenNoClusterFitsAnnotation on a PropagationPolicy or
	// ClusterPropagationPolicy says what happens to its placed workloads
	// when no cluster matches the placement's cluster affinity any more:
	// "Keep" (atoll's default: the placement stays) or "Withdraw"
	// (Karmada's behaviour: the workload is removed from the clusters that
	// no longer match). It overrides the controller-manager's
	// --when-no-cluster-fits. atoll's addition.
	WhenNoClusterFitsAnnotation = "atoll.dev/when-no-cluster-fits"
)
