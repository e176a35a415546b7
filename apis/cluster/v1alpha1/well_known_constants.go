package v1alpha1

// Taint keys that atoll puts on Cluster objects. They are Karmada's keys, so
// clusterTolerations written for Karmada keep working.
const (
	// TaintClusterNotReady is added while the cluster's Ready condition is
	// False and removed when it becomes True.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"

	// TaintClusterUnreachable is added while the cluster's Ready condition is
	// Unknown (the control plane cannot reach it) and removed when it becomes
	// True.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"

	// TaintClusterUnscheduler is added while the cluster is cordoned for new
	// placements and removed when it is schedulable again. The name keeps
	// Karmada's spelling.
	TaintClusterUnscheduler = "cluster.karmada.io/unschedulable"
)

// Condition types of a Cluster.
const (
	// ClusterConditionReady says whether the cluster is healthy and can take
	// workloads.
	ClusterConditionReady = "Ready"

	// ClusterConditionCompleteAPIEnablements says whether status.apiEnablements
	// lists every API of the cluster (False when discovery was partial).
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// Keys of the Secret that spec.secretRef and spec.impersonatorSecretRef name.
const (
	// SecretTokenKey holds the bearer token.
	SecretTokenKey = "token"

	// SecretCADataKey holds the PEM CA bundle of the cluster's API server.
	SecretCADataKey = "caBundle"
)

// Annotations atoll sets on the credentials of a cluster.
const (
	// CredentialEndpointAnnotation on a cluster's credentials Secret is the
	// API endpoint the credentials were issued for (set by atoll join). atoll
	// sends them nowhere else: a Cluster whose apiEndpoint differs is not
	// connected until it is joined again.
	CredentialEndpointAnnotation = "atoll.dev/issued-for-endpoint"
)
