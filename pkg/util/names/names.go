// Package names holds the names, labels and annotations that atoll's
// controllers agree on. Karmada's spellings are kept wherever Karmada has
// one, so tools written for Karmada find atoll's objects; atoll's own
// additions use the atoll.dev prefix.
package names

import (
	"strings"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

const (
	// ManagedLabel marks every object atoll applies in a member cluster;
	// member informers select on it (value "true"), as Karmada's do.
	ManagedLabel = "karmada.io/managed"

	// ResourceBindingPermanentIDLabel is the permanent id (a UUID) of a
	// ResourceBinding, on the binding itself and on the member objects it
	// produced.
	ResourceBindingPermanentIDLabel = "resourcebinding.karmada.io/permanent-id"
	// ClusterResourceBindingPermanentIDLabel is the same for a
	// ClusterResourceBinding.
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"

	// ResourceBindingNamespaceAnnotation and ResourceBindingNameAnnotation on
	// a member object name the ResourceBinding that produced it.
	ResourceBindingNamespaceAnnotation = "resourcebinding.karmada.io/namespace"
	ResourceBindingNameAnnotation      = "resourcebinding.karmada.io/name"
	// ClusterResourceBindingAnnotation names the ClusterResourceBinding.
	ClusterResourceBindingAnnotation = "clusterresourcebinding.karmada.io/name"

	// ManifestHashAnnotation on a member object is the hash of the manifest
	// atoll last applied there. Equal hash, no write: this is what keeps a
	// restart free of writes to members.
	ManifestHashAnnotation = "atoll.dev/manifest-hash"

	// PreserveOnDeleteAnnotation ("true") on a member object says the
	// binding preserves resources on deletion: withdrawal and unjoin leave
	// the object in the member.
	PreserveOnDeleteAnnotation = "atoll.dev/preserve-on-delete"

	// TookOverAnnotation ("true") on a member object records that it existed
	// before atoll took it over (conflictResolution Overwrite): when atoll
	// lets go of it, it is handed back (atoll's marks removed), not deleted.
	TookOverAnnotation = "atoll.dev/took-over"

	// CredentialEndpointAnnotation on a cluster's credentials Secret is the
	// API endpoint the credentials were issued for (set by atoll join). atoll
	// sends them nowhere else: a Cluster whose apiEndpoint differs is not
	// connected until it is joined again.
	CredentialEndpointAnnotation = "atoll.dev/issued-for-endpoint"

	// AttachedLabel ("true") marks an attached ResourceBinding: the
	// binding of a dependency (ConfigMap, Secret, ServiceAccount, PVC)
	// that follows the workloads requiring it (spec.requiredBy) rather
	// than a policy. The dependencies controller owns these bindings.
	AttachedLabel = "atoll.dev/attached"

	// RetainReplicasByHPAAnnotation ("true") on a template records that the
	// hpa-marker controller, not the user, set Karmada's retain-replicas
	// label because a HorizontalPodAutoscaler targets the template; the
	// marker removes only labels it set.
	RetainReplicasByHPAAnnotation = "atoll.dev/retain-replicas-by-hpa"

	// FieldManager is the server-side apply field manager of everything
	// atoll writes.
	FieldManager = "atoll"

	// ClusterSecretNamespace holds the credentials of push-mode clusters
	// (Karmada: karmada-cluster).
	ClusterSecretNamespace = "karmada-cluster"
	// SystemNamespace holds atoll's own objects in the control plane.
	SystemNamespace = "atoll-system"

	// ExecutionNamespacePrefix + cluster name is Karmada's per-cluster
	// namespace; atoll has no Work objects and creates none, but never
	// propagates into such a namespace either.
	ExecutionNamespacePrefix = "karmada-es-"
)

// BindingName is the name of the ResourceBinding (or
// ClusterResourceBinding) of a template, as Karmada forms it:
// lower(<name>-<kind>), with ':' replaced by '.'.
func BindingName(kind, name string) string {
	return strings.ReplaceAll(strings.ToLower(name+"-"+kind), ":", ".")
}

// ClusterSecretName is the Secret holding a push-mode cluster's
// credentials (keys "token" and "caBundle", as Karmada's).
func ClusterSecretName(cluster string) string { return cluster }

// IsAttached reports whether binding labels mark an attached binding (a
// dependency following the workloads that require it) that no policy has
// claimed since: the dependencies controller alone places it, even while no
// workload requires it (a kept volume).
func IsAttached(labels map[string]string) bool {
	return labels[AttachedLabel] == "true" &&
		labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" &&
		labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == ""
}

// ReservedNamespaces are the control-plane namespaces atoll never
// propagates from, and in which no binding may exist: the Kubernetes system
// namespaces, and Karmada's and atoll's own (the member credentials live in
// ClusterSecretNamespace). An entry ending in "*" is a prefix.
func ReservedNamespaces() []string {
	return []string{
		"kube-system", "kube-public", "kube-node-lease",
		"karmada-system", ClusterSecretNamespace, ExecutionNamespacePrefix + "*",
		SystemNamespace,
	}
}

// NamespaceListed reports whether ns is in list (entries ending in "*" are
// prefixes). The empty namespace (cluster scope) is in no list.
func NamespaceListed(list []string, ns string) bool {
	if ns == "" {
		return false
	}
	for _, s := range list {
		if prefix, ok := strings.CutSuffix(s, "*"); ok {
			if strings.HasPrefix(ns, prefix) {
				return true
			}
		} else if s == ns {
			return true
		}
	}
	return false
}
