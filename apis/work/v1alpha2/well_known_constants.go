package v1alpha2

// Labels and annotations on bindings and on the objects they manage. The
// keys are Karmada's, so tools written for Karmada can read them.
const (
	// CleanupFinalizer keeps a binding until the executor has withdrawn
	// its member objects. Bindings are created with it, so that the
	// executor never needs a write just to add it.
	CleanupFinalizer = "atoll.dev/cleanup"

	// ResourceBindingPermanentIDLabel holds the permanent ID of a
	// ResourceBinding.
	ResourceBindingPermanentIDLabel = "resourcebinding.karmada.io/permanent-id"

	// ClusterResourceBindingPermanentIDLabel holds the permanent ID of a
	// ClusterResourceBinding.
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"

	// ResourceConflictResolutionAnnotation on a resource template overrides
	// the policy's conflictResolution for that template. Its values are
	// ResourceConflictResolutionOverwrite and ResourceConflictResolutionAbort.
	ResourceConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"

	// ResourceConflictResolutionOverwrite takes existing member objects over.
	ResourceConflictResolutionOverwrite = "overwrite"

	// ResourceConflictResolutionAbort leaves existing member objects alone.
	ResourceConflictResolutionAbort = "abort"

	// DeletionProtectionLabelKey on a resource template, with the value
	// DeletionProtectionAlways, refuses its deletion.
	DeletionProtectionLabelKey = "resourcetemplate.karmada.io/deletion-protected"

	// DeletionProtectionAlways is the value of DeletionProtectionLabelKey
	// that enables the protection.
	DeletionProtectionAlways = "Always"

	// ReleasedAnnotation on a binding holds the time (RFC 3339) at which no
	// policy claimed its template any more. A released binding is kept, and
	// so are the member objects it made: nothing is applied, withdrawn,
	// scheduled or evicted until a policy claims the template again (the
	// annotation then goes) or the template is deleted (then the objects
	// are withdrawn). atoll's addition.
	ReleasedAnnotation = "atoll.dev/released"

	// NamespaceAutoProvisionLabel marks the ClusterResourceBinding of a
	// namespace that no policy claims, which the detector places on every
	// cluster (Karmada's namespace auto-provision, done there by the
	// namespace sync controller with Works). atoll's addition.
	NamespaceAutoProvisionLabel = "atoll.dev/namespace-auto-provision"

	// ManagedLabel marks every object atoll applies in a member cluster;
	// member informers select on it (value "true"), as Karmada's do.
	ManagedLabel = "karmada.io/managed"

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

	// RetainReplicasLabel on a resource template says member clusters own
	// its replicas (a member HPA scales the workload): atoll does not set
	// them. Karmada's key; any value.
	RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"
)

// Interpreted is the binding condition saying whether the kind's
// ResourceInterpreterCustomization ran. It is present only while a script
// fails: False, with a reason naming the operation
// (<Operation>Failed, e.g. ReplicaResourceFailed) and a message naming the
// customization. atoll's addition.
const Interpreted = "Interpreted"

// Reasons and producers of graceful eviction tasks.
const (
	// EvictionReasonTaintUntolerated: the cluster has a NoExecute taint that
	// the placement does not tolerate.
	EvictionReasonTaintUntolerated = "TaintUntolerated"

	// EvictionReasonApplicationFailure: the application stayed unhealthy on
	// the cluster for longer than failover.application allows.
	EvictionReasonApplicationFailure = "ApplicationFailure"

	// EvictionProducerTaintManager is the producer of taint-based evictions.
	EvictionProducerTaintManager = "TaintManager"

	// EvictionProducerApplicationFailover is the producer of evictions for
	// application failures.
	EvictionProducerApplicationFailover = "ApplicationFailover"
)
