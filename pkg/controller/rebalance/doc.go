// Package rebalance is the rebalance controller: it moves a workload whose
// target distribution changed (a weight edit, a cluster joining or leaving
// the placement) from the distribution it runs to the new one in steps.
//
// The scheduler hands a move over instead of writing it: it records its
// result on the binding (rebalance.TargetAnnotation) and leaves
// spec.clusters alone. This controller, one Rebalance object per workload
// under migration, then writes spec.clusters step by step, each step in two
// halves: the target clusters grow first (spec.clusters for plain
// workloads; the member HPAs' minReplicas floor for workloads whose member
// HPAs own the replicas, rebalance.HPALimitsAnnotation), and only once
// their new pods are available do the sources shrink (spec.clusters, or a
// cap on the source HPA's maxReplicas). A step ends when every source has
// come down to the plan; a step that makes no progress for its deadline
// pauses or rolls back.
//
// All state lives in the Rebalance status and the binding, so a restarted
// controller continues at the same step. Pause, abort and rollback are
// spec fields (the CLI sets them).
package rebalance
