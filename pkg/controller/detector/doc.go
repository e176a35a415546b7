// Package detector matches resource templates in the control plane
// (Deployments, ConfigMaps, CRs, ...) to PropagationPolicies and
// ClusterPropagationPolicies and keeps one ResourceBinding (namespaced
// templates) or ClusterResourceBinding (cluster-scoped templates) per claimed
// template. It implements the "Detector" section of
// docs/design/0003-propagation.md.
//
// # Watching
//
// The detector discovers the control plane's preferred resources and watches
// every one that supports list, watch, create and get and is not on the skip
// list (Options.SkippedResources, DefaultSkippedResources) with a
// metadata-only informer: templates are never cached in full, and the
// informers drop managedFields, owner references, finalizers and
// last-applied-configuration. Discovery runs again every
// Options.RediscoveryPeriod to watch new CRDs. Templates in
// Options.SkippedNamespaces (and Namespace objects of those names) are
// ignored. Policies and bindings are read from the manager's cache.
//
// # Matching
//
// See match.go. A PropagationPolicy matches templates of its own namespace
// only. A resource selector matches on apiVersion (the template's preferred
// group/version) and kind, then name if set (labelSelector ignored), else
// labelSelector if set, else every template of the kind; a set namespace
// must equal the template's. Among matching policies any PropagationPolicy
// beats every ClusterPropagationPolicy, then the higher spec.priority, then
// the higher implicit priority (name match > labelSelector match > kind
// match; a policy's is that of its best selector), then the lower policy
// name. Policies being deleted match nothing.
//
// There is no preemption (Karmada's default): a template claimed by a policy
// stays with it as long as that policy exists with the same permanent id,
// is not being deleted and still matches the template, even if a policy
// created later would win. spec.preemption: Always is accepted and ignored.
// A policy without its permanent-id label yet cannot claim; a template whose
// best match is such a policy waits for the label rather than going to a
// lesser policy.
//
// # Claims and bindings
//
// Each policy gets a permanent-id label (a UUID) if it has none. A claimed
// template carries the policy's permanent-id label and name annotations
// (Karmada's keys), patched with a metadata merge patch only when different
// and removed when no policy matches any more. The binding is named
// names.BindingName(kind, name), carries its own permanent-id label, the
// policy's claim label and annotations, annotation
// TemplateFingerprintAnnotation, and a controller owner reference to the
// template. Its spec holds the template reference, replicas and replica
// requirements (Deployment, StatefulSet, ReplicaSet: spec.replicas; Job:
// spec.parallelism; Pod: 1; requirements from the pod template: effective
// resource requests and node claim) and, copied from the policy, placement,
// propagateDeps, conflictResolution, failover, suspension (the binding's own
// suspension.scheduling is kept), preserveResourcesOnDeletion and
// schedulerName. Fields others own (clusters, eviction tasks, requiredBy,
// ...) are never touched. A binding is written only when its desired content
// differs (merge patch with optimistic locking), and deleted when its
// template is deleted or no longer claimed; bindings that carry no policy
// claim label (not made by the detector) are never deleted.
//
// The template fingerprint (uid, generation or, for kinds without one,
// resourceVersion, labels and annotations, without claim bookkeeping) decides
// when the binding must describe a newer template version. While it is
// unchanged the binding keeps its recorded spec.resource.resourceVersion,
// replicas and requirements, so status-only writes to templates (the
// executor aggregates status onto them) and restarts cause no binding writes
// and no reads of full templates.
//
// # Namespace auto-provision
//
// A Namespace no policy claims gets a ClusterResourceBinding that places it
// on every cluster, tolerating every taint (namespaces.go), as Karmada's
// namespace sync controller gives it a Work per cluster; see
// names.NamespaceAutoProvisioned for the namespaces left out. The binding
// is labelled workv1alpha2.NamespaceAutoProvisionLabel instead of a claim,
// and the Namespace itself gets no claim metadata. Options.
// NamespaceAutoProvision turns it on (--controllers selects it as
// "namespace").
//
// # Activation preference
//
// Policy updates re-evaluate the templates the policy claims or matches,
// except for policies with activationPreference Lazy: their creation and
// updates (spec, priority, selectors) reach a template only when that
// template itself next changes (its fingerprint), as in Karmada. This also
// holds across detector restarts: a template claimed by a Lazy policy whose
// fingerprint still equals the one recorded on its binding is left alone
// entirely. Deletion of a Lazy policy takes effect at once. Templates no
// policy claims are evaluated against the current policies whenever they
// are evaluated (for example after a restart), Lazy or not.
//
// # Work
//
// One priority work queue (controller-runtime's) keyed by GVR, namespace and
// name, drained by Options.Workers workers; events from informers' initial
// lists are queued at low priority so that new changes go first. Metrics:
// the standard workqueue_* series (name="detector") and atoll_detector_*
// (bindings_written_total{op}, claims_written_total{op},
// reconciles_total{kind,result}, reconcile_duration_seconds,
// active_workers, watched_resources, policy_ids_written_total).
//
// The detector runs only on the elected leader; its readiness check passes
// once the first discovery's informers have synced (or at once on a
// replica that is not leading).
package detector
