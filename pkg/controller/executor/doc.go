// Package executor is the executor: for every ResourceBinding and
// ClusterResourceBinding it renders the template for each scheduled
// cluster, applies it with server-side apply, corrects drift, withdraws it
// from clusters that left the placement, and aggregates member status into
// the binding and the template. There are no Work objects: the binding is
// the only per-template object in the control plane. Its controllers are
// named executor-resourcebinding and executor-clusterresourcebinding.
//
// The units, one file each:
//
//   - sync.go: one binding's reconcile: which clusters to apply to, which
//     to withdraw from (planWithdrawals), and the new status (summarize);
//   - apply.go: one cluster: render (pkg/interpreter), overrides,
//     ownership metadata, hash, retain, drift check, server-side apply;
//   - withdraw.go: deleting or handing back member objects, only those
//     this binding owns (pkg/ownership), and the finalizer;
//   - status.go: coalesced binding status writes and the template's
//     aggregated status;
//   - handlers.go: which events enqueue which bindings;
//   - sweep.go, tombstones.go, unresponsive.go: finding copies no status
//     records, withdrawals that wait for a member, members that do not
//     answer;
//   - state.go: what the executor remembers between reconciles.
//
// Cost rules (DESIGN.md section 4): a member object whose manifest-hash
// annotation matches and that has not drifted is never written; member
// objects are watched through label-selected informers only; status is
// written only when it changed, and member status churn at most once per
// StatusInterval per binding, the template's aggregate with it (a change
// other controllers act on — clusters, Applied, Health, FullyApplied — is
// written at once).
package executor
