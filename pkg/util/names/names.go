// Package names holds the object names and namespaces atoll's controllers
// agree on. Well-known label and annotation keys live with the API types
// (apis/work/v1alpha2, apis/policy/v1alpha1, apis/cluster/v1alpha1).
package names

import (
	"strings"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

const (
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

// ClaimLabels are the labels a policy puts on the templates it claims
// (and, as Karmada does, on their bindings): its permanent ID, one label
// per policy kind.
var ClaimLabels = []string{
	policyv1alpha1.PropagationPolicyPermanentIDLabel,
	policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
}

// IsAttached reports whether binding labels mark an attached binding (a
// dependency following the workloads that require it) that no policy has
// claimed since: the dependencies controller alone places it, even while no
// workload requires it (a kept volume).
func IsAttached(labels map[string]string) bool {
	return labels[workv1alpha2.AttachedLabel] == "true" &&
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

// NamespaceAutoProvisioned reports whether a control-plane namespace goes
// to every cluster when no policy claims it (Karmada's namespace sync):
// not a reserved namespace, not default (every cluster has one), not kube-*
// (Karmada's default --skipped-propagating-namespaces), and not labelled
// namespace.karmada.io/skip-auto-propagation: "true".
func NamespaceAutoProvisioned(name string, labels map[string]string) bool {
	if name == "default" || strings.HasPrefix(name, "kube-") || NamespaceListed(ReservedNamespaces(), name) {
		return false
	}
	return !strings.EqualFold(labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel], "true")
}

// repeatedValues are the labels and annotations, on templates and bindings,
// whose values many objects share (a policy's name and id, flags); the
// others (a binding's own id, a template's fingerprint, users' labels) may
// be unique per object.
var repeatedValues = map[string]bool{
	policyv1alpha1.PropagationPolicyPermanentIDLabel:        true,
	policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: true,
	policyv1alpha1.PropagationPolicyNamespaceAnnotation:     true,
	policyv1alpha1.PropagationPolicyNameAnnotation:          true,
	policyv1alpha1.ClusterPropagationPolicyAnnotation:       true,
	workv1alpha2.NamespaceAutoProvisionLabel:                true,
	workv1alpha2.ResourceConflictResolutionAnnotation:       true,
	workv1alpha2.AttachedLabel:                              true,
	workv1alpha2.ManagedLabel:                               true,
	appsv1alpha1.BaselineLabel:                              true,
}

// RepeatedValue reports whether the values of label or annotation key
// repeat across objects, so that caches may keep one copy of each
// (pkg/util/intern).
func RepeatedValue(key string) bool { return repeatedValues[key] }
