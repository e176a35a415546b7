// Package replicassyncer is Karmada's deploymentReplicasSyncer: when member
// HPAs own a Divided Deployment's replicas (the template carries the
// retain-replicas label, see package hpamarker), the template's
// spec.replicas follows what the members run, so that `kubectl get` on the
// template, the scheduler's division and gradual moves all start from the
// real total instead of the number the template was created with.
//
// The root is the workload's ResourceBinding. The controller writes the
// template's spec.replicas (a merge patch with optimistic locking) only
// when all of these hold, which are Karmada's conditions plus one:
//
//   - the binding is Divided, its scheduler result is current
//     (schedulerObservedGeneration) and no gradual move is under way on it;
//   - every scheduled cluster has reported a status, with replicas > 0 (a
//     member HPA never runs fewer than one);
//   - every member has finished rolling out (updatedReplicas == replicas
//     and observedGeneration current): during a rollout status.replicas
//     counts surge pods, which are not the HPA's choice (atoll's addition);
//   - the template's spec.replicas is the binding's (the last edit reached
//     the scheduler) and its aggregated status.replicas is the members'
//     sum, which differs from spec.replicas.
//
// A manual edit of the template's replicas is therefore taken back to the
// members' sum once the members report (as in Karmada); it takes effect
// only where it changes which clusters run the workload, since the member
// HPAs keep their replica counts. Duplicated workloads are left alone: each
// member runs the whole workload and the template's replicas are per
// cluster.
package replicassyncer
