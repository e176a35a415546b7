package cmds

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Rebalance configures `atoll rebalance`.
type Rebalance struct {
	// Kubeconfig reaches the control plane (see ControlPlaneKubeconfig).
	Kubeconfig string
	// Action is list, status, pause, resume, abort or rollback.
	Action string
	// Namespace and AllNamespaces select Rebalances for list; Namespace
	// empty means the kubeconfig's namespace, then "default".
	Namespace     string
	AllNamespaces bool
	// Target is NAMESPACE/NAME or NAME of one Rebalance.
	Target string
	Out    io.Writer
}

// NewRebalanceCommand returns `atoll rebalance`.
func NewRebalanceCommand(run func(context.Context, *Rebalance) error) *cobra.Command {
	cfg := &Rebalance{}
	cmd := &cobra.Command{
		Use:   "rebalance list [-n NS|-A] | rebalance status|pause|resume|abort|rollback [NS/]NAME",
		Short: "Follow and steer gradual moves of workloads between clusters",
		Long: `A Rebalance moves one workload between member clusters in steps when its
target distribution changes (docs/rebalance.md).

  list      the moves, with phase, step, progress and the distributions
  status    one move: per cluster planned, spec, ready and HPA bounds; conditions; ETA; recent steps
  pause     hold the move at the next half-step
  resume    continue a paused move (after a pause, a stage pause or a missed deadline)
  abort     freeze the workload where it runs now; no pod is deleted because of it
  rollback  move the workload back to where it started, with the same stepping`,
		Example: `  atoll rebalance list -A
  atoll rebalance status shop/web-deployment
  atoll rebalance pause shop/web-deployment`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] == "list" {
				return nil
			}
			if len(args) == 2 {
				switch args[0] {
				case "status", "pause", "resume", "abort", "rollback":
					return nil
				}
			}
			return cmd.Usage()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Action, cfg.Out = args[0], cmd.OutOrStdout()
			if len(args) == 2 {
				cfg.Target = args[1]
			}
			cfg.Kubeconfig = ControlPlaneKubeconfig(cfg.Kubeconfig)
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, then ./.atoll/kubeconfig)")
	fs.StringVarP(&cfg.Namespace, "namespace", "n", "", "namespace of the Rebalances")
	fs.BoolVarP(&cfg.AllNamespaces, "all-namespaces", "A", false, "list the Rebalances of all namespaces")
	return cmd
}
