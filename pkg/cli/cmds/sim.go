package cmds

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// SimCluster configures `atoll sim cluster`: one simulated member cluster.
type SimCluster struct {
	// Name is the member's name; its data lives in DATA-DIR/members/NAME.
	Name string
	// DataDir is the top-level data dir shared with `atoll up`.
	DataDir string

	Nodes      int
	NodeCPU    resource.Quantity
	NodeMemory resource.Quantity
	MaxPods    int
	// PodReadyDelay is how long the simulated kubelet takes a pod to Ready.
	PodReadyDelay time.Duration
	// JobPodRunTime is how long a Job's pod runs before it succeeds.
	JobPodRunTime time.Duration

	HPASyncPeriod             time.Duration
	HPADownscaleStabilization time.Duration

	// Region, Zone and Provider label the member's nodes and describe the
	// member to the federation.
	Region   string
	Zone     string
	Provider string

	// APIOnly runs only etcd, kube-apiserver and the fault proxy.
	APIOnly bool

	// Logging.LogFile defaults to DATA-DIR/members/NAME/logs/member.log.
	Logging Logging
}

// SimLoad configures `atoll sim load`.
type SimLoad struct {
	DataDir string
	// App names the application: pods labelled app=APP.
	App string
	// CPU is the offered load in cores (3, 2500m).
	CPU resource.Quantity
	// Out receives the command's report (standard output).
	Out io.Writer
}

// SimFault configures `atoll sim fault`.
type SimFault struct {
	DataDir string
	// Target is a member name ("control-plane" is reserved).
	Target string
	// Action is stop, start, partition, heal, slow or fast.
	Action string
	// Latency is what slow adds to every request.
	Latency time.Duration
	// Wait bounds how long to wait until the member shows the effect; 0
	// records the fault without waiting.
	Wait time.Duration
	// Out receives the command's report (standard output).
	Out io.Writer
}

// SimActions are the behaviours behind `atoll sim`.
type SimActions struct {
	Cluster func(ctx context.Context, cfg *SimCluster) error
	Load    func(ctx context.Context, cfg *SimLoad) error
	Fault   func(ctx context.Context, cfg *SimFault) error
}

// NewSimCommand returns `atoll sim` and its subcommands.
func NewSimCommand(a SimActions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulated member clusters, offered load and fault injection (the test bed)",
		Long: `Commands of the simulated world that "atoll up" runs: member cluster
processes, the offered load of applications and faults injected into members.
They share nothing but files under --data-dir (see docs/simulator-faults.md).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newSimClusterCommand(a.Cluster),
		newSimLoadCommand(a.Load),
		newSimFaultCommand(a.Fault),
	)
	return cmd
}

func newSimClusterCommand(run func(context.Context, *SimCluster) error) *cobra.Command {
	cfg := &SimCluster{
		NodeCPU:    resource.MustParse("8"),
		NodeMemory: resource.MustParse("32Gi"),
	}
	cmd := &cobra.Command{
		Use:   "cluster --name NAME",
		Short: "Run one simulated member cluster in this process (atoll up starts these)",
		Long: `Run one simulated member cluster: an embedded etcd and kube-apiserver, the
Kubernetes controllers that matter, a scheduler, simulated nodes and kubelet,
and a fault proxy in front of the API server. Its data lives in
DATA-DIR/members/NAME.

When it serves, it writes DATA-DIR/members/NAME/status.json with Ready=true and
prints one line starting with "atoll member ready: NAME". It applies the faults
in DATA-DIR/members/NAME/fault.json and stops cleanly on SIGTERM.

With --api-only the member is only its API server (and etcd, the fault proxy
and the ServiceAccount token controller that joining needs): Deployments are stored but no pod is ever made, so a benchmark's CPU
goes to the federation instead of simulated workloads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			if cfg.Logging.LogFile == "" {
				cfg.Logging.LogFile = filepath.Join(cfg.DataDir, "members", cfg.Name, "logs", "member.log")
			}
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Name, "name", "", "name of the member cluster (a DNS-1123 label)")
	fs.StringVar(&cfg.DataDir, "data-dir", ".atoll", "top-level data directory of atoll up; the member keeps its data in DATA-DIR/members/NAME")
	fs.IntVar(&cfg.Nodes, "nodes", 3, "number of simulated nodes")
	fs.Var(quantityValue{&cfg.NodeCPU}, "node-cpu", "CPU capacity of each node")
	fs.Var(quantityValue{&cfg.NodeMemory}, "node-memory", "memory capacity of each node")
	fs.IntVar(&cfg.MaxPods, "max-pods", 110, "pod capacity of each node")
	fs.DurationVar(&cfg.PodReadyDelay, "pod-ready-delay", time.Second, "how long the simulated kubelet takes a scheduled pod to Running and Ready")
	fs.DurationVar(&cfg.JobPodRunTime, "job-pod-run-time", 5*time.Second, "how long a pod a Job owns runs before its containers exit 0 and it succeeds (0: Job pods run until deleted)")
	fs.DurationVar(&cfg.HPASyncPeriod, "hpa-sync-period", 5*time.Second, "period of the horizontal pod autoscaler controller")
	fs.DurationVar(&cfg.HPADownscaleStabilization, "hpa-downscale-stabilization", 30*time.Second, "downscale stabilization window of the horizontal pod autoscaler controller")
	fs.StringVar(&cfg.Region, "region", "", "region of the member (topology.kubernetes.io/region of its nodes)")
	fs.StringVar(&cfg.Zone, "zone", "", "zone of the member (topology.kubernetes.io/zone of its nodes)")
	fs.StringVar(&cfg.Provider, "provider", "", "provider of the member")
	fs.BoolVar(&cfg.APIOnly, "api-only", false, "run only etcd, kube-apiserver, the fault proxy and the ServiceAccount token controller (joining needs it): no workload controllers, scheduler, nodes or metrics, so objects are stored and nothing acts on them; for benchmarks of the federation itself")
	fs.StringVar(&cfg.Logging.LogFile, "log-file", "", "file that receives logs (default DATA-DIR/members/NAME/logs/member.log)")
	fs.IntVarP(&cfg.Logging.Verbosity, "v", "v", 0, "log verbosity (0 operators, 1 decisions, 2+ traces)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (c *SimCluster) validate() error {
	if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", c.Name, strings.Join(errs, "; "))
	}
	switch {
	case c.Nodes < 0:
		return fmt.Errorf("--nodes %d: must not be negative", c.Nodes)
	case c.MaxPods < 1:
		return fmt.Errorf("--max-pods %d: must be at least 1", c.MaxPods)
	case c.NodeCPU.Sign() <= 0:
		return fmt.Errorf("--node-cpu %s: must be positive", c.NodeCPU.String())
	case c.NodeMemory.Sign() <= 0:
		return fmt.Errorf("--node-memory %s: must be positive", c.NodeMemory.String())
	case c.PodReadyDelay < 0:
		return fmt.Errorf("--pod-ready-delay %v: must not be negative", c.PodReadyDelay)
	case c.JobPodRunTime < 0:
		return fmt.Errorf("--job-pod-run-time %v: must not be negative", c.JobPodRunTime)
	case c.HPASyncPeriod <= 0:
		return fmt.Errorf("--hpa-sync-period %v: must be positive", c.HPASyncPeriod)
	case c.HPADownscaleStabilization < 0:
		return fmt.Errorf("--hpa-downscale-stabilization %v: must not be negative", c.HPADownscaleStabilization)
	}
	return nil
}

func newSimLoadCommand(run func(context.Context, *SimLoad) error) *cobra.Command {
	cfg := &SimLoad{}
	cmd := &cobra.Command{
		Use:   "load APP CPU",
		Short: "Set the CPU load offered to an application across all members",
		Long: `Set the CPU load offered to APP (its pods are labelled app=APP) across the
simulated world. CPU is a quantity of cores: 3, 2.5 or 2500m; 0 removes the
load. The world spreads it over APP's Ready pods in reachable members, and the
members' horizontal pod autoscalers see the resulting CPU usage.`,
		Example: `  atoll sim load web 3
  atoll sim load web 2500m --data-dir .atoll`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cpu, err := resource.ParseQuantity(args[1])
			if err != nil {
				return fmt.Errorf("CPU %q: %w", args[1], err)
			}
			cfg.App, cfg.CPU, cfg.Out = args[0], cpu, cmd.OutOrStdout()
			return run(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.DataDir, "data-dir", ".atoll", "data directory of atoll up")
	return cmd
}

func newSimFaultCommand(run func(context.Context, *SimFault) error) *cobra.Command {
	cfg := &SimFault{}
	cmd := &cobra.Command{
		Use:   "fault TARGET ACTION",
		Short: "Inject or lift a fault on a simulated member cluster or the control plane",
		Long: `Inject or lift a fault on TARGET, a member or control-plane (the federation
control plane of atoll up: etcd, kube-apiserver and the controllers), and wait
until it takes effect.

ACTION is one of:
  stop       kill the member process (a crash); atoll up keeps it down
  start      let atoll up start it again
  partition  cut the member off: the control plane's connections time out and
             the world sends it no traffic
  heal       end the partition
  slow       add --latency to every request to the member's API server
  fast       remove the added latency

control-plane takes stop (its process is killed, members and the world keep
running) and start (it starts again from the same data dir and address; the
command waits for /readyz).

The fault is recorded in DATA-DIR/members/TARGET/fault.json (for the control
plane DATA-DIR/control-plane/fault.json), so it outlives restarts of the
member and of atoll up (a new atoll up lifts a control-plane stop). See
docs/simulator-faults.md.`,
		Example: `  atoll sim fault member2 partition
  atoll sim fault control-plane stop
  atoll sim fault member2 slow --latency 2s
  atoll sim fault member1 stop --wait 1m`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Target, cfg.Action, cfg.Out = args[0], args[1], cmd.OutOrStdout()
			return run(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.DataDir, "data-dir", ".atoll", "data directory of atoll up")
	fs.DurationVar(&cfg.Latency, "latency", 500*time.Millisecond, "latency that slow adds to every request")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "how long to wait until the member shows the effect (0: do not wait)")
	return cmd
}

// quantityValue is a pflag.Value holding a resource quantity.
type quantityValue struct{ q *resource.Quantity }

func (v quantityValue) String() string {
	if v.q == nil {
		return ""
	}
	return v.q.String()
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	*v.q = q
	return nil
}

func (quantityValue) Type() string { return "quantity" }
