package cmds

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Tenant configures `atoll tenant`.
type Tenant struct {
	// Kubeconfig reaches the control plane (see ControlPlaneKubeconfig).
	Kubeconfig string
	// Action is list or describe.
	Action string
	// Name is the tenant describe shows.
	Name string
	Out  io.Writer
}

// NewTenantCommand returns `atoll tenant`.
func NewTenantCommand(run func(context.Context, *Tenant) error) *cobra.Command {
	cfg := &Tenant{}
	cmd := &cobra.Command{
		Use:   "tenant list | tenant describe NAME",
		Short: "Show the teams sharing the control plane and their boundaries",
		Long: `A Tenant is a team's room in a shared control plane (docs/tenancy.md): its
subjects may write PropagationPolicies and OverridePolicies only in its
namespaces, for its templates, placing only on its cluster set.

  list      the tenants: namespaces (shared ones marked *), cluster set now, Ready
  describe  one tenant: who its subjects are, where they may write, which
            templates and clusters they reach, its policies, and what is wrong
            with the boundary if it is not Ready`,
		Example: `  atoll tenant list
  atoll tenant describe team-a`,
		Args: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1 && args[0] == "list") || (len(args) == 2 && args[0] == "describe") {
				return nil
			}
			return cmd.Usage()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Action, cfg.Out = args[0], cmd.OutOrStdout()
			if len(args) == 2 {
				cfg.Name = args[1]
			}
			cfg.Kubeconfig = ControlPlaneKubeconfig(cfg.Kubeconfig)
			return run(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, then ./.atoll/kubeconfig)")
	return cmd
}
