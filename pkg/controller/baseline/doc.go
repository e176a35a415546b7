// Package baseline is the ClusterBaseline controller: it delivers each
// baseline's components to every matching cluster in dependency order,
// cluster by cluster, and withdraws them in reverse order.
//
// Each component is claimed through a generated ClusterPropagationPolicy
// whose bindings carry spec.schedulerName atoll-baseline: the scheduler
// leaves them alone and this controller writes their spec.clusters (a
// component is placed on a cluster once its prerequisites are ready there)
// and their allowed-revisions annotation (a changed template rolls out to a
// cluster once its prerequisites' current versions are ready there). The
// executor applies, evaluates readiness (kstatus or the component's CEL
// expression, pkg/baseline) on the member object and reports it in the
// binding status, which this controller watches: delivery is event driven.
//
// A second reconciler, keyed by cluster, keeps the
// baseline.atoll.dev/not-ready:NoSchedule taint on clusters a baseline
// gates (pkg/baseline Gates).
package baseline
