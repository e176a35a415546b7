// Package dependencies is atoll's dependencies distributor (Karmada's
// dependencies-distributor): the ConfigMaps, Secrets, ServiceAccounts and
// PersistentVolumeClaims a workload's pod template refers to follow the
// workload to exactly the clusters it runs on, when its binding says
// spec.propagateDeps: true.
//
// The root kind is the requiring ResourceBinding. For each one the
// controller reads the workload template (a dynamic GET, only when the
// template version recorded on the binding changed; full templates are never
// cached) and lists its dependencies (see Of). For every dependency that
// exists in the control plane it maintains an attached ResourceBinding:
// named names.BindingName(kind, name) in the same namespace, labelled
// workv1alpha2.AttachedLabel, with spec.resource pointing at the dependency (its
// resourceVersion kept current so the executor re-renders changed content),
// no placement, spec.requiredBy holding one BindingSnapshot per requiring
// binding (namespace, name, cluster names) and spec.clusters the union of
// those clusters with zero replicas. conflictResolution and
// preserveResourcesOnDeletion come from the first requirer (by name). The
// scheduler skips such bindings and the executor applies them like any
// other. When a requirer no longer refers to the dependency, stops
// propagating dependencies or goes away, it is removed from requiredBy; a
// binding left with no requirer is deleted, and the executor's finalizer
// withdraws the dependency from the members.
//
// A dependency that has a binding not labelled as attached (its own policy
// claimed it, or some other tool made it) is left alone.
//
// Events: bindings (spec or label changes) enqueue themselves, attached
// bindings enqueue their requirers; dependency objects are watched
// metadata-only through the control plane's shared template informers
// (pkg/templatemeta, the detector's; the manager's cache holds Secrets of
// one namespace only), and enqueue the bindings that require them, known from the attached binding and from an in-memory map of
// what every requirer referred to at its last reconcile (so a ConfigMap
// created after its Deployment is picked up). Writes are merge patches with
// optimistic locking, made only when the attached binding would change.
package dependencies
