// Package scheduler is atoll's scheduler controller: it places
// ResourceBindings and ClusterResourceBindings on clusters by writing
// spec.clusters, and reports the outcome in status (schedulerObservedGeneration,
// lastScheduledTime, condition Scheduled). docs/design/0003-propagation.md
// is its contract with the other controllers; docs/design/0004-scheduler.md
// records its decisions.
//
// The controller is level-based: a binding is (re)scheduled when its
// generation is new to the scheduler or when any scheduling-relevant part
// of a Cluster changes (labels, spec, API enablements, condition
// statuses). An attempt is a pure computation (package framework) from the
// binding and the cached clusters; writes happen only when the result or
// the status differs, so an idle restart writes nothing.
//
// When nothing fits, spec.clusters is left as it was (workloads are never
// removed because no replacement fits) and Scheduled=False says why;
// the next Cluster change retries.
package scheduler
