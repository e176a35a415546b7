// Package cluster is the cluster controller: for every push-mode Cluster it
// probes the member's /readyz every status period and keeps the Cluster's
// status — the Ready condition (flipped only after the new state lasted a
// success or failure threshold), CompleteAPIEnablements, kubernetesVersion,
// apiEnablements, nodeSummary and resourceSummary — and the
// cluster.karmada.io/not-ready and cluster.karmada.io/unreachable NoSchedule
// taints that follow Ready.
//
// It writes only on change: the status is patched when something other
// than timestamps changed, the taints when the set changed. It never polls
// a dead member faster than the status period, and a probe is bounded by
// the probe timeout, so one dead member holds one worker for at most that
// long.
//
// Threshold state (since when a new Ready state has been observed) lives in
// memory. After a restart the controller starts from the recorded
// condition, so a restart can delay a flip by up to one threshold but never
// causes one.
package cluster
