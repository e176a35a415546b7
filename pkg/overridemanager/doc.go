// Package overridemanager applies OverridePolicies and
// ClusterOverridePolicies to the manifest of a resource for one member
// cluster, in Karmada's order: ClusterOverridePolicies first, then the
// OverridePolicies of the resource's namespace; within each set the less
// specific policy first (so the most specific wins), then by name; within a
// policy the rules whose targetCluster selects the cluster, each rule's
// overriders in the fixed order image, command, args, labels, annotations,
// field, plaintext.
package overridemanager
