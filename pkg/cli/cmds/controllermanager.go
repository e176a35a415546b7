package cmds

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// ControllerManager configures `atoll controller-manager`.
type ControllerManager struct {
	Kubeconfig string
	// Shards splits the per-template work between processes (pkg/shard).
	Shards  int
	Logging Logging
	Manager Manager
}

// NewControllerManagerCommand returns `atoll controller-manager`.
func NewControllerManagerCommand(run func(context.Context, *ControllerManager) error) *cobra.Command {
	cfg := &ControllerManager{}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run atoll's controllers against an existing Kubernetes API server (distributed mode)",
		Long: `Run atoll's controllers against any Kubernetes API server that has atoll's
CRDs installed (see "atoll crds"). Several replicas may run: one leads through
a Lease, the others wait.

With --shards N (N > 1, and --leader-elect), every replica works: templates
are split into N shards by a stable hash of their binding's namespace/name,
each shard is held by one replica through its own Lease
(LEADER-ELECTION-NAMESPACE/atoll-controller-manager-shard-I), the replicas
share the shards evenly, and a dead replica's shards move to the others once
their Leases expire (15s). The cluster-wide controllers (cluster, tenant,
baseline, rebalance) still run in the elected leader only. See
docs/sharding.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), cfg) },
	}
	cmd.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control-plane API server (default: $KUBECONFIG, then in-cluster config)")
	cmd.Flags().IntVar(&cfg.Shards, "shards", 1, "split the per-template work into this many shards, held through Leases by the replicas that run with the same --shards; 1 runs it all in the leader")
	cfg.Logging.addFlags(cmd, "")
	cfg.Manager.addFlags(cmd, ":8080", ":8081", true)
	managerChecks := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if cfg.Shards < 1 {
			return fmt.Errorf("--shards: must be at least 1, got %d", cfg.Shards)
		}
		if cfg.Shards > 1 && !cfg.Manager.LeaderElect {
			return fmt.Errorf("--shards %d: needs --leader-elect, so that the cluster-wide controllers run in one replica only", cfg.Shards)
		}
		return managerChecks(c, args)
	}
	return cmd
}

// NewCRDsCommand returns `atoll crds`.
func NewCRDsCommand(run func(io.Writer) error) *cobra.Command {
	return &cobra.Command{
		Use:   "crds",
		Short: "Print atoll's CustomResourceDefinitions as YAML (for kubectl apply -f -)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return run(cmd.OutOrStdout()) },
	}
}
