// Package failover moves bindings off clusters that failed and off
// clusters where the application keeps failing, without ever making an
// outage bigger:
//
//   - Cluster failover (Karmada's taint manager): a binding scheduled to a
//     cluster with a NoExecute taint its placement does not tolerate (or
//     tolerates for tolerationSeconds, counted from the taint's timeAdded)
//     is evicted. The cluster controller adds cluster.karmada.io/not-ready
//     and /unreachable with NoExecute when a cluster fails.
//   - Application failover (failover.application): a binding whose
//     resource stays Unhealthy on a cluster for
//     decisionConditions.tolerationSeconds is evicted from it.
//
// An eviction removes the cluster from spec.clusters and records a
// graceful eviction task in the same write (package eviction); the
// scheduler places the replicas elsewhere and ends the task; the executor
// purges the old copy by the task's purge mode.
//
// Safety: evictions are paced by one fleet-wide token bucket; taint-based
// evictions pause while more than --unhealthy-cluster-threshold of the
// clusters is not Ready (a federation-side network problem looks like
// that); and an eviction happens only if the scheduler's own plugins find
// somewhere else for the replicas. Held-back evictions are explained in
// the binding's EvictionBlocked condition and retried when clusters change.
package failover
