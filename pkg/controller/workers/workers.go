// Package workers holds the default number of workers of each controller
// whose count is a flag: each controller's Options falls back to it, and
// the command line (pkg/cli/cmds, which does not import the controllers)
// shows and uses it as the flag's default, so the two cannot drift.
package workers

const (
	// Templates is the detector's (--concurrent-resource-template-syncs):
	// a reconcile mostly waits on the API server.
	Templates = 32
	// Bindings is the executor's for each binding kind
	// (--concurrent-resourcebinding-syncs,
	// --concurrent-clusterresourcebinding-syncs).
	Bindings = 16
	// Scheduler is the scheduler's for each binding kind
	// (--concurrent-scheduler-syncs).
	Scheduler = 16
	// Clusters is the cluster controller's (--concurrent-cluster-syncs).
	Clusters = 5
	// Dependencies is the dependencies distributor's
	// (--concurrent-dependent-resource-syncs).
	Dependencies = 2
)
