package cmds

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultKubeconfig is the control-plane kubeconfig `atoll up` writes with
// its default data dir.
var DefaultKubeconfig = filepath.Join(".atoll", "kubeconfig")

// ControlPlaneKubeconfig resolves the control-plane kubeconfig of commands
// that talk to the control plane: the --kubeconfig flag, else $KUBECONFIG
// (which may list several files), else ./.atoll/kubeconfig.
func ControlPlaneKubeconfig(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env
	}
	return DefaultKubeconfig
}

// MaxClusterNameLength is the longest cluster name (Karmada's limit).
const MaxClusterNameLength = 48

// ValidateClusterName checks that name is a DNS-1123 label of at most 48
// characters.
func ValidateClusterName(name string) error {
	errs := validation.IsDNS1123Label(name)
	if len(name) > MaxClusterNameLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", MaxClusterNameLength))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// Join configures `atoll join`.
type Join struct {
	// Name is the cluster's name in the federation.
	Name string
	// Kubeconfig reaches the control plane (see ControlPlaneKubeconfig).
	Kubeconfig string
	// ClusterKubeconfig and ClusterContext reach the member with rights to
	// create a namespace, a ServiceAccount and a ClusterRoleBinding.
	ClusterKubeconfig string
	ClusterContext    string
	Region            string
	Zone              string
	Provider          string
	// Labels are put on the Cluster object.
	Labels map[string]string
	// AllowInsecure accepts a member kubeconfig that skips TLS
	// verification; refused otherwise (the member's token would go to
	// whoever answers at its address).
	AllowInsecure bool
	// Out receives one line per step.
	Out io.Writer
}

// Unjoin configures `atoll unjoin`.
type Unjoin struct {
	Name       string
	Kubeconfig string
	// ClusterKubeconfig and ClusterContext, when set, reach the member
	// instead of the credentials the control plane stored at join.
	ClusterKubeconfig string
	ClusterContext    string
	// SkipMember removes the cluster from the control plane only, leaving
	// the member untouched (for a member that is gone for good).
	SkipMember bool
	Out        io.Writer
}

// NewJoinCommand returns `atoll join`.
func NewJoinCommand(run func(context.Context, *Join) error) *cobra.Command {
	cfg := &Join{}
	cmd := &cobra.Command{
		Use:   "join NAME --cluster-kubeconfig FILE",
		Short: "Register a member cluster with the control plane (push mode)",
		Long: `Register the cluster that --cluster-kubeconfig reaches as member NAME.

In the member, atoll creates namespace karmada-cluster, ServiceAccount
karmada-NAME bound to cluster-admin and its token Secret; in the control plane
it stores that token and the member's CA in Secret karmada-cluster/NAME and
creates the Cluster NAME (syncMode Push, apiEndpoint = the kubeconfig's
server). Joining again updates everything. NAME is a DNS-1123 label of at most
48 characters.

A cluster is registered once: joining a cluster that is already joined under
another name (same kube-system namespace UID), or a different cluster under a
taken name, is refused. A kubeconfig that skips TLS verification is refused
unless --allow-insecure-skip-tls-verify is given. See docs/clusters.md.`,
		Example: `  atoll join member1 --cluster-kubeconfig member1.kubeconfig --region cn-east --zone cn-east-1a
  atoll join edge --cluster-kubeconfig ~/.kube/config --cluster-context edge --labels env=prod,tier=edge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Name, cfg.Out = args[0], cmd.OutOrStdout()
			if err := ValidateClusterName(cfg.Name); err != nil {
				return err
			}
			cfg.Kubeconfig = ControlPlaneKubeconfig(cfg.Kubeconfig)
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, then ./.atoll/kubeconfig)")
	fs.StringVar(&cfg.ClusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster (required)")
	fs.StringVar(&cfg.ClusterContext, "cluster-context", "", "context in --cluster-kubeconfig (default: its current context)")
	fs.StringVar(&cfg.Region, "region", "", "region of the member cluster")
	fs.StringVar(&cfg.Zone, "zone", "", "zone of the member cluster (recorded as spec.zones)")
	fs.StringVar(&cfg.Provider, "provider", "", "cloud provider of the member cluster")
	fs.StringToStringVar(&cfg.Labels, "labels", nil, "labels of the Cluster object, e.g. env=prod,tier=edge")
	fs.BoolVar(&cfg.AllowInsecure, "allow-insecure-skip-tls-verify", false,
		"accept a --cluster-kubeconfig that skips TLS verification (the member is then not authenticated, and its cluster-admin token goes to whoever answers at its address)")
	_ = cmd.MarkFlagRequired("cluster-kubeconfig")
	return cmd
}

// NewUnjoinCommand returns `atoll unjoin`.
func NewUnjoinCommand(run func(context.Context, *Unjoin) error) *cobra.Command {
	cfg := &Unjoin{}
	cmd := &cobra.Command{
		Use:   "unjoin NAME",
		Short: "Remove a member cluster from the control plane and clean it up",
		Long: `Remove member NAME: delete the Cluster, then, in the member, every object atoll
owns there (label karmada.io/managed=true with the ownership record of a binding
that exists in the control plane with that permanent id; the label alone is not
enough), except that objects atoll took over or preserves on deletion, and
namespaces that hold objects atoll did not create, are handed back (atoll's
marks removed) instead of deleted; and the ServiceAccount, token Secret,
ClusterRoleBinding and (when atoll created it and no other cluster uses it)
namespace karmada-cluster that join created; last the control-plane Secret
karmada-cluster/NAME.

The member is reached with the credentials stored at join, or with
--cluster-kubeconfig. Nothing is changed when the member cannot be reached,
unless --skip-member is given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Name, cfg.Out = args[0], cmd.OutOrStdout()
			if err := ValidateClusterName(cfg.Name); err != nil {
				return err
			}
			cfg.Kubeconfig = ControlPlaneKubeconfig(cfg.Kubeconfig)
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, then ./.atoll/kubeconfig)")
	fs.StringVar(&cfg.ClusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster (default: the credentials stored at join)")
	fs.StringVar(&cfg.ClusterContext, "cluster-context", "", "context in --cluster-kubeconfig")
	fs.BoolVar(&cfg.SkipMember, "skip-member", false, "do not touch the member cluster (it is unreachable for good); remove it from the control plane only")
	return cmd
}
