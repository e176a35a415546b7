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
	Logging     Logging
	Manager     Manager
}

// NewUpCommand returns `atoll up`.
func NewUpCommand(run func(context.Context, *Up) error) *cobra.Command {
	cfg := &Up{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run the embedded federation control plane (etcd, kube-apiserver, controllers) in this process",
		Long: `Run the embedded federation control plane in this process: an etcd server, a
kube-apiserver serving the Karmada-compatible APIs, and atoll's controllers;
and, as child processes, --members simulated member clusters (member1,
member2, …; kubeconfigs in DATA-DIR/members/NAME/kubeconfig).

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
	cfg.Logging.addFlags(cmd, "DATA-DIR/logs/atoll.log")
	// Embedded mode: the data-dir lock already guarantees a single
	// controller-manager, and ports default off so several control planes
	// can run side by side (tests do).
	cfg.Manager.addFlags(cmd, "0", "0", false)
	return cmd
}
