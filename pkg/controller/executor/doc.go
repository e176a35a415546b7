// Package binding is the executor: for every ResourceBinding and
// ClusterResourceBinding it renders the template for each scheduled
// cluster, applies it with server-side apply, corrects drift, withdraws it
// from clusters that left the placement, and aggregates member status into
// the binding and the template. There are no Work objects: the binding is
// the only per-template object in the control plane.
//
// Cost rules (DESIGN.md section 4): a member object whose manifest-hash
// annotation matches and that has not drifted is never written; member
// objects are watched through label-selected informers only; status is
// written only when it changed, at most once per StatusInterval per binding.
package executor
