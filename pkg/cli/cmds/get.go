package cmds

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Get configures `atoll get`.
type Get struct {
	// Kubeconfig reaches the control plane (see ControlPlaneKubeconfig).
	Kubeconfig string
	// Resource is what to list: "clusters", or a resource of the control
	// plane (deployments, deploy.apps, …).
	Resource string
	// Namespace and AllNamespaces select namespaced resources; Namespace
	// empty means the kubeconfig's namespace, then "default".
	Namespace     string
	AllNamespaces bool
	// Name shows one object only.
	Name string
	Out  io.Writer
}

// NewGetCommand returns `atoll get`.
func NewGetCommand(run func(context.Context, *Get) error) *cobra.Command {
	cfg := &Get{}
	cmd := &cobra.Command{
		Use:   "get clusters | get baselines [NAME] | get RESOURCE [-n NS|-A] [NAME]",
		Short: "Show member clusters, baseline delivery, or resource templates and where they run",
		Long: `atoll get clusters lists the member clusters with their health, version, sync
mode, region, zone, nodes (ready/total), CPU and memory (allocated /
allocatable) and age.

atoll get baselines lists the ClusterBaselines; atoll get baseline NAME shows
its delivery matrix: per cluster the components ready (n/N), whether the
cluster is still gated (tainted baseline.atoll.dev/not-ready), what is in
progress or failed and the time to baseline; then per cluster and component,
in dependency order, the state (Waiting, Applying, Ready, Failed,
Withdrawing), since when, and what it waits for or why it failed.`,
		Example: `  atoll get clusters
  atoll get clusters member1
  atoll get baseline platform`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Resource, cfg.Out = args[0], cmd.OutOrStdout()
			if len(args) == 2 {
				cfg.Name = args[1]
			}
			cfg.Kubeconfig = ControlPlaneKubeconfig(cfg.Kubeconfig)
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, then ./.atoll/kubeconfig)")
	fs.StringVarP(&cfg.Namespace, "namespace", "n", "", "namespace of namespaced resources")
	fs.BoolVarP(&cfg.AllNamespaces, "all-namespaces", "A", false, "list namespaced resources of all namespaces")
	return cmd
}
