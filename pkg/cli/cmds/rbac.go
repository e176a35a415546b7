package cmds

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// RBAC configures `atoll rbac`.
type RBAC struct {
	// User is the user name the roles are bound to (a client certificate's
	// common name), unless ServiceAccount is set.
	User string
	// ServiceAccount, NAMESPACE/NAME, binds the roles to a ServiceAccount
	// instead (a controller-manager running in a cluster).
	ServiceAccount string
	Out            io.Writer
}

// NewRBACCommand returns `atoll rbac`.
func NewRBACCommand(run func(*RBAC) error) *cobra.Command {
	cfg := &RBAC{}
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Print the RBAC objects the controller-manager needs (least privilege), as YAML for kubectl apply -f -",
		Long: `Print the ClusterRole atoll:controller-manager, its binding, and the Role and
RoleBinding for the leader Lease in namespace atoll-system (with the Namespace),
bound to --user or --service-account. atoll up runs its embedded
controller-manager with exactly these rights. See docs/security.md.`,
		Example: `  atoll rbac --service-account atoll-system/atoll-controller-manager | kubectl apply -f -`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sa := cfg.ServiceAccount; sa != "" {
				if ns, name, ok := strings.Cut(sa, "/"); !ok || ns == "" || name == "" {
					return fmt.Errorf("--service-account %q: want NAMESPACE/NAME", sa)
				}
			}
			cfg.Out = cmd.OutOrStdout()
			return run(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.User, "user", "atoll-controller-manager", "user the roles are bound to")
	cmd.Flags().StringVar(&cfg.ServiceAccount, "service-account", "", "NAMESPACE/NAME of a ServiceAccount to bind the roles to instead of --user")
	return cmd
}
