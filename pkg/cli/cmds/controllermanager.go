package cmds

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// ControllerManager configures `atoll controller-manager`.
type ControllerManager struct {
	Kubeconfig string
	Logging    Logging
	Manager    Manager
}

// NewControllerManagerCommand returns `atoll controller-manager`.
func NewControllerManagerCommand(run func(context.Context, *ControllerManager) error) *cobra.Command {
	cfg := &ControllerManager{}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run atoll's controllers against an existing Kubernetes API server (distributed mode)",
		Long: `Run atoll's controllers against any Kubernetes API server that has atoll's
CRDs installed (see "atoll crds"). Several replicas may run: one leads through
a Lease, the others wait.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), cfg) },
	}
	cmd.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control-plane API server (default: $KUBECONFIG, then in-cluster config)")
	cfg.Logging.addFlags(cmd, "")
	cfg.Manager.addFlags(cmd, ":8080", ":8081", true)
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
