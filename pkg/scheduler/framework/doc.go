// Package framework is atoll's scheduling framework: the plugin interfaces,
// the per-attempt SchedulingContext and the Framework that runs one
// attempt as filter → score → select → assign.
//
// A scheduling attempt is a pure function of a binding and a snapshot of
// the clusters: plugins do no I/O, so an attempt is deterministic and cheap
// enough to re-run on every relevant change (the controller in
// pkg/scheduler is level-based). Plugins live in pkg/scheduler/plugins;
// replica division in pkg/scheduler/division.
//
// The shape follows the kube-scheduler framework and Karmada's scheduler:
// every filter runs on every cluster, a cluster is rejected by the first
// filter that fails, and when no cluster is left the attempt fails with a
// FitError whose message counts the reasons, Kubernetes style
// ("0/3 clusters are available: 2 cluster(s) did not match clusterAffinity,
// 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}.").
package framework
