// Package cmds holds atoll's command-line surface: one flag struct and one
// cobra command per verb. Behaviour lives in pkg/cli/<verb>; main wires the
// two together so this package stays free of heavy imports.
package cmds

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/atoll-dev/atoll/pkg/controller/workers"
)

// Actions are the behaviours behind the verbs.
type Actions struct {
	Up                func(ctx context.Context, cfg *Up) error
	ControllerManager func(ctx context.Context, cfg *ControllerManager) error
	CRDs              func(w io.Writer) error
	RBAC              func(cfg *RBAC) error
	Sim               SimActions
	Join              func(ctx context.Context, cfg *Join) error
	Unjoin            func(ctx context.Context, cfg *Unjoin) error
	Get               func(ctx context.Context, cfg *Get) error
	Rebalance         func(ctx context.Context, cfg *Rebalance) error
	Tenant            func(ctx context.Context, cfg *Tenant) error
}

// NewRootCommand returns the `atoll` command with all its verbs.
func NewRootCommand(a Actions) *cobra.Command {
	root := &cobra.Command{
		Use:           "atoll",
		Short:         "atoll: a multi-cluster Kubernetes federation control plane, Karmada-compatible",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		NewUpCommand(a.Up),
		NewControllerManagerCommand(a.ControllerManager),
		NewCRDsCommand(a.CRDs),
		NewRBACCommand(a.RBAC),
		NewSimCommand(a.Sim),
		NewJoinCommand(a.Join),
		NewUnjoinCommand(a.Unjoin),
		NewGetCommand(a.Get),
		NewRebalanceCommand(a.Rebalance),
		NewTenantCommand(a.Tenant),
	)
	return root
}

// Logging are the log flags every long-running verb takes.
type Logging struct {
	// LogFile receives the logs; empty means standard error.
	LogFile   string
	Verbosity int
}

func (l *Logging) addFlags(cmd *cobra.Command, defaultFile string) {
	cmd.Flags().StringVar(&l.LogFile, "log-file", defaultFile, "file that receives logs (\"\" logs to standard error)")
	cmd.Flags().IntVarP(&l.Verbosity, "v", "v", 0, "log verbosity (0 operators, 1 decisions, 2+ traces)")
}

// Manager are the controller-manager flags, shared by `up` and
// `controller-manager`.
type Manager struct {
	Controllers             []string
	KubeAPIQPS              float32
	KubeAPIBurst            int
	ClusterStatusPeriod     time.Duration
	ClusterSuccessThreshold time.Duration
	ClusterFailureThreshold time.Duration
	MemberSweepPeriod       time.Duration
	BindingStatusWindow     time.Duration
	Failover                Failover
	Workers                 Workers
	RebalanceMaxInFlight    int32
	RebalanceSettleWindow   time.Duration
	WhenNoClusterFits       string
	EventTypes              []string
	MetricsBindAddress      string
	HealthProbeBindAddress  string
	PprofBindAddress        string
	LeaderElect             bool
	LeaderElectionNamespace string
}

// Workers are how many objects each controller reconciles at once, under
// Karmada's flag names where Karmada has one.
type Workers struct {
	ResourceTemplate       int
	ResourceBinding        int
	ClusterResourceBinding int
	Scheduler              int
	Cluster                int
	DependentResource      int
}

func (w *Workers) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&w.ResourceTemplate, "concurrent-resource-template-syncs", workers.Templates, "templates the detector reconciles at once (claims and binding writes, each mostly a wait on the API server)")
	fs.IntVar(&w.ResourceBinding, "concurrent-resourcebinding-syncs", workers.Bindings, "ResourceBindings the executor syncs to their member clusters at once")
	fs.IntVar(&w.ClusterResourceBinding, "concurrent-clusterresourcebinding-syncs", workers.Bindings, "ClusterResourceBindings the executor syncs to their member clusters at once")
	fs.IntVar(&w.Scheduler, "concurrent-scheduler-syncs", workers.Scheduler, "bindings of each kind the scheduler places at once (atoll's own flag: Karmada's scheduler is a process of its own)")
	fs.IntVar(&w.Cluster, "concurrent-cluster-syncs", workers.Clusters, "member clusters whose health and status are collected at once")
	fs.IntVar(&w.DependentResource, "concurrent-dependent-resource-syncs", workers.Dependencies, "bindings whose dependencies (the ConfigMaps, Secrets and others a workload refers to) are propagated at once")
}

// Validate checks that every controller has at least one worker.
func (w *Workers) Validate() error {
	for _, f := range []struct {
		name string
		n    int
	}{
		{"concurrent-resource-template-syncs", w.ResourceTemplate},
		{"concurrent-resourcebinding-syncs", w.ResourceBinding},
		{"concurrent-clusterresourcebinding-syncs", w.ClusterResourceBinding},
		{"concurrent-scheduler-syncs", w.Scheduler},
		{"concurrent-cluster-syncs", w.Cluster},
		{"concurrent-dependent-resource-syncs", w.DependentResource},
	} {
		if f.n < 1 {
			return fmt.Errorf("--%s: must be at least 1, got %d", f.name, f.n)
		}
	}
	return nil
}

// Failover is how failed clusters and applications are handled.
type Failover struct {
	NoExecuteTaints           bool
	PurgeMode                 string
	EvictionRate              float64
	EvictionBurst             int
	GracefulEvictionTimeout   time.Duration
	UnhealthyClusterThreshold float64
}

func (f *Failover) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.NoExecuteTaints, "enable-no-execute-taints", true, "taint a failed cluster (Ready False or Unknown for --cluster-failure-threshold) with NoExecute as well as NoSchedule, so that failover moves what does not tolerate it; false taints NoSchedule only, as Karmada v1.14+")
	fs.StringVar(&f.PurgeMode, "no-execute-taint-eviction-purge-mode", "Gracefully", "what happens to the copy on a failed cluster when the policy's failover.cluster.purgeMode does not say: Directly, Gracefully or Never")
	fs.Float64Var(&f.EvictionRate, "resource-eviction-rate", 10, "evictions (and returns to recovered clusters) per second across the fleet; 0 means unlimited")
	fs.IntVar(&f.EvictionBurst, "resource-eviction-burst", 20, "evictions allowed at once before --resource-eviction-rate applies")
	fs.DurationVar(&f.GracefulEvictionTimeout, "graceful-eviction-timeout", 10*time.Minute, "how long a Gracefully eviction keeps the old copy at most while the replacement becomes healthy, when the task has no gracePeriodSeconds")
	fs.Float64Var(&f.UnhealthyClusterThreshold, "unhealthy-cluster-threshold", 0.55, "pause taint-based evictions while more than this fraction of the clusters is not Ready (a federation-side network problem looks like that); 1 never pauses")
}

// Validate checks the failover flags.
func (f *Failover) Validate() error {
	switch f.PurgeMode {
	case "Directly", "Gracefully", "Never", "Immediately", "Graciously":
	default:
		return fmt.Errorf("--no-execute-taint-eviction-purge-mode: %q is not a purge mode: use Directly, Gracefully or Never", f.PurgeMode)
	}
	if f.EvictionRate < 0 {
		return fmt.Errorf("--resource-eviction-rate: must not be negative, got %g", f.EvictionRate)
	}
	if f.EvictionBurst < 1 {
		return fmt.Errorf("--resource-eviction-burst: must be at least 1, got %d", f.EvictionBurst)
	}
	if f.GracefulEvictionTimeout <= 0 {
		return fmt.Errorf("--graceful-eviction-timeout: must be positive, got %s", f.GracefulEvictionTimeout)
	}
	if f.UnhealthyClusterThreshold <= 0 || f.UnhealthyClusterThreshold > 1 {
		return fmt.Errorf("--unhealthy-cluster-threshold: must be in (0, 1], got %g", f.UnhealthyClusterThreshold)
	}
	return nil
}

func (m *Manager) addFlags(cmd *cobra.Command, metrics, health string, leaderElect bool) {
	fs := cmd.Flags()
	fs.StringSliceVar(&m.Controllers, "controllers", []string{"*"}, "controllers to run: '*' all, 'name' one, '-name' not that one (e.g. '*,-scheduler'); empty runs none")
	fs.Float32Var(&m.KubeAPIQPS, "kube-api-qps", -1, "queries per second the controllers may send to the control-plane API server (their writes and reads together; the manager's watches, leader election and events have a bucket of the same size of their own); negative sets no client-side limit and leaves it to the API server's priority and fairness, as SIG API Machinery advises (each controller's concurrency is bounded by its workers)")
	fs.IntVar(&m.KubeAPIBurst, "kube-api-burst", 200, "burst of requests the controllers may send to the control-plane API server, with a positive --kube-api-qps")
	fs.DurationVar(&m.ClusterStatusPeriod, "cluster-status-period", 10*time.Second, "how often each member cluster's health and status are collected")
	fs.DurationVar(&m.ClusterSuccessThreshold, "cluster-success-threshold", 30*time.Second, "how long a member must stay healthy before it is marked Ready")
	fs.DurationVar(&m.ClusterFailureThreshold, "cluster-failure-threshold", 30*time.Second, "how long a member must stay unhealthy before it is marked not Ready")
	fs.DurationVar(&m.MemberSweepPeriod, "member-sweep-period", 5*time.Minute, "how often every Ready member is made to watch every propagated resource, so copies no binding status records are found and withdrawn where unwanted")
	fs.DurationVar(&m.BindingStatusWindow, "binding-status-coalesce-window", 3*time.Second, "least time between two writes of one binding's status (and its template's aggregated status) for member status churn; changes in between are merged into one write. Changes of clusters, Applied, Health or FullyApplied are written at once")
	m.Failover.addFlags(cmd)
	m.Workers.addFlags(cmd)
	fs.Int32Var(&m.RebalanceMaxInFlight, "rebalance-max-in-flight", 1000, "replicas that gradual moves (Rebalances) may add at once across the fleet before their sources shrink; further steps queue; 0 means unlimited")
	fs.DurationVar(&m.RebalanceSettleWindow, "rebalance-settle-window", 3*time.Second, "how long a workload's new target must stay unchanged before a gradual move steps, so weight and replica edits arriving together make one plan")
	fs.StringVar(&m.WhenNoClusterFits, "when-no-cluster-fits", "Keep", "what happens to a placed workload when no cluster matches its policy's cluster affinity any more: Keep (the placement stays) or Withdraw (removed from the clusters that no longer match, as Karmada does); a policy's atoll.dev/when-no-cluster-fits annotation overrides it")
	fs.StringSliceVar(&m.EventTypes, "event-types", []string{"Normal", "Warning"}, "which events the controllers record: Normal (Karmada's success events, about eight per new template) and Warning (failures and conflicts); \"Warning\" alone spares the control plane the success events of a large burst; empty records none")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if m.KubeAPIQPS == 0 {
			return fmt.Errorf("--kube-api-qps: 0 would leave client-go's default of 5; use a positive rate, or a negative one for no client-side limit")
		}
		if m.KubeAPIQPS > 0 && m.KubeAPIBurst < 1 {
			return fmt.Errorf("--kube-api-burst: must be at least 1 with --kube-api-qps %g, got %d", m.KubeAPIQPS, m.KubeAPIBurst)
		}
		for _, t := range m.EventTypes {
			if t != "Normal" && t != "Warning" {
				return fmt.Errorf("--event-types: %q is not an event type: use Normal, Warning or both", t)
			}
		}
		if m.WhenNoClusterFits != "Keep" && m.WhenNoClusterFits != "Withdraw" {
			return fmt.Errorf("--when-no-cluster-fits: %q is not Keep or Withdraw", m.WhenNoClusterFits)
		}
		if m.BindingStatusWindow < 0 {
			return fmt.Errorf("--binding-status-coalesce-window: must not be negative, got %v", m.BindingStatusWindow)
		}
		if m.RebalanceMaxInFlight < 0 {
			return fmt.Errorf("--rebalance-max-in-flight: must not be negative, got %d", m.RebalanceMaxInFlight)
		}
		if err := m.Workers.Validate(); err != nil {
			return err
		}
		return m.Failover.Validate()
	}
	fs.StringVar(&m.MetricsBindAddress, "metrics-bind-address", metrics, "address of the Prometheus metrics endpoint (\"0\" disables it)")
	fs.StringVar(&m.HealthProbeBindAddress, "health-probe-bind-address", health, "address of /healthz and /readyz (\"0\" disables them)")
	fs.StringVar(&m.PprofBindAddress, "pprof-bind-address", "0", "address of the Go profiling endpoints, /debug/pprof/ (\"0\" disables them; they expose the process's memory, keep them on loopback)")
	fs.BoolVar(&m.LeaderElect, "leader-elect", leaderElect, "elect a leader among controller-manager replicas through a Lease")
	fs.StringVar(&m.LeaderElectionNamespace, "leader-election-namespace", "atoll-system", "namespace of the leader election Lease")
}
