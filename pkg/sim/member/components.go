package member

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// controllers are the kube-controller-manager controllers a simulated
// member runs: the workload controllers, autoscaling, service endpoints,
// namespace and garbage collection, and service accounts (pods are refused
// until their namespace has its default ServiceAccount). The node
// lifecycle and IPAM controllers are left out: the simulated kubelet owns
// node health and pod IPs.
var controllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"horizontal-pod-autoscaler-controller",
	"endpointslice-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"disruption-controller",
	"ttl-after-finished-controller",
	"pod-garbage-collector-controller",
}

// kcmConfig is what the controller-manager needs from the member.
type kcmConfig struct {
	Kubeconfig              string
	ClusterName             string
	ServiceAccountKeyFile   string
	RootCAFile              string
	HPASyncPeriod           time.Duration
	HPADownscaleWindow      time.Duration
	HPACPUInitialization    time.Duration
	HPAInitialReadinessDiff time.Duration
}

// runControllerManager runs the real kube-controller-manager in this
// process. It is built from its options rather than its cobra command so
// the caller's context stops it.
func runControllerManager(ctx context.Context, c kcmConfig) (<-chan error, error) {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager options: %w", err)
	}
	known, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	named := s.Flags(known, disabled, aliases)
	s.ParsedFlags = &named
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--cluster-name=" + c.ClusterName,
		"--service-account-private-key-file=" + c.ServiceAccountKeyFile,
		"--root-ca-file=" + c.RootCAFile,
		"--use-service-account-credentials=false",
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--horizontal-pod-autoscaler-sync-period=" + c.HPASyncPeriod.String(),
		"--horizontal-pod-autoscaler-downscale-stabilization=" + c.HPADownscaleWindow.String(),
		"--horizontal-pod-autoscaler-cpu-initialization-period=" + c.HPACPUInitialization.String(),
		"--horizontal-pod-autoscaler-initial-readiness-delay=" + c.HPAInitialReadinessDiff.String(),
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-controller-manager feature gates: %w", err)
	}
	cfg, err := s.Config(ctx, known, disabled, aliases)
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager config: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- kcmapp.Run(ctx, cfg.Complete()) }()
	return done, nil
}

// runScheduler runs the real kube-scheduler (default profile) in this
// process, through Setup and Run: its cobra command installs a second
// process-wide signal handler, which panics.
func runScheduler(ctx context.Context, kubeconfig string) (<-chan error, error) {
	opts := schedoptions.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		// Bulk binding: a low client rate limit makes a scale-up of a few
		// hundred pods take minutes.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	}); err != nil {
		return nil, fmt.Errorf("kube-scheduler flags: %w", err)
	}
	cc, sched, err := schedapp.Setup(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler setup: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- schedapp.Run(ctx, cc, sched) }()
	return done, nil
}
