package cmds

import (
	"context"

	"github.com/spf13/cobra"
)

// Up configures `atoll up`.
type Up struct {
	DataDir string
	Listen  string
	// Members is how many simulated member clusters to run (0: none).
	Members int
	// MemberArgs are extra `atoll sim cluster` flags for every member.
	MemberArgs []string
	// JoinMembers registers the simulated members as Clusters.
	JoinMembers bool
	// KubeAPIServerArgs are extra flags of the control plane's
	// kube-apiserver (k3s's --kube-apiserver-arg), e.g. audit logging.
	KubeAPIServerArgs []string
	Logging           Logging
	Manager           Manager
	// ServeControlPlane (hidden --serve-control-plane) makes this process
	// the control-plane child of `atoll up`: etcd, kube-apiserver and the
	// controllers only, no members, the data-dir lock inherited as
	// descriptor 3 (see docs/design/0005-control-plane-process.md).
	ServeControlPlane bool
}

// ServeControlPlaneFlag is the hidden flag `atoll up` adds when it starts
// its control-plane process.
const ServeControlPlaneFlag = "serve-control-plane"

// NewUpCommand returns `atoll up`.
func NewUpCommand(run func(context.Context, *Up) error) *cobra.Command {
	cfg := &Up{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run the embedded federation control plane (etcd, kube-apiserver, controllers) and simulated members",
		Long: `Run the embedded federation control plane: an etcd server, a kube-apiserver
serving the Karmada-compatible APIs, and atoll's controllers, in one child
process that atoll up supervises (restarted if it crashes; stopped and
started by ` + "`atoll sim fault control-plane stop|start`" + `; it logs to
DATA-DIR/logs/control-plane.log); and, as child processes too, --members
simulated member clusters (member1, member2, …; kubeconfigs in
DATA-DIR/members/NAME/kubeconfig).

When the control plane serves, atoll prints one line containing "atoll ready"
and the path of the admin kubeconfig (DATA-DIR/kubeconfig). Data persists in
--data-dir across restarts. SIGINT or SIGTERM stops everything cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), cfg) },
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data-dir", ".atoll", "directory for etcd data, certificates, kubeconfig and logs")
	cmd.Flags().StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "host:port of the API server; port 0 picks a free port and keeps it across restarts")
	cmd.Flags().IntVar(&cfg.Members, "members", 3, "number of simulated member clusters to run (0: control plane only)")
	cmd.Flags().BoolVar(&cfg.JoinMembers, "join-members", true, "join the simulated members to the control plane (through their fault proxies)")
	cmd.Flags().StringSliceVar(&cfg.MemberArgs, "member-args", nil, "extra flags for every `atoll sim cluster`, e.g. --member-args=--nodes=5,--pod-ready-delay=2s")
	cmd.Flags().StringArrayVar(&cfg.KubeAPIServerArgs, "kube-apiserver-arg", nil, "extra flag for the control plane's kube-apiserver, repeatable and taking precedence over atoll's own, e.g. --kube-apiserver-arg=--audit-log-path=/var/log/atoll-audit.log")
	cfg.Logging.addFlags(cmd, "DATA-DIR/logs/atoll.log")
	cmd.Flags().BoolVar(&cfg.ServeControlPlane, ServeControlPlaneFlag, false, "serve only the control plane, as the child of an atoll up that holds the data-dir lock")
	_ = cmd.Flags().MarkHidden(ServeControlPlaneFlag)
	// Embedded mode: the data-dir lock already guarantees a single
	// controller-manager, and ports default off so several control planes
	// can run side by side (tests do).
	cfg.Manager.addFlags(cmd, "0", "0", false)
	return cmd
}
