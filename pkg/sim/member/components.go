package member

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/atoll-dev/atoll/pkg/controlplane"
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

// tokenControllers are what an api-only member runs of the
// controller-manager: `atoll join` waits for its ServiceAccount token
// Secret to be filled.
var tokenControllers = []string{"serviceaccount-token-controller"}

// kcmConfig is what the controller-manager needs from the member.
type kcmConfig struct {
	Kubeconfig              string
	ClusterName             string
	Controllers             []string
	ServiceAccountKeyFile   string
	RootCAFile              string
	HPASyncPeriod           time.Duration
	HPADownscaleWindow      time.Duration
	HPACPUInitialization    time.Duration
	HPAInitialReadinessDiff time.Duration
}

// runControllerManager runs the member's kube-controller-manager.
func runControllerManager(ctx context.Context, c kcmConfig) (<-chan error, error) {
	return controlplane.RunControllerManager(ctx, controlplane.ControllerManagerConfig{
		Kubeconfig:  c.Kubeconfig,
		ClusterName: c.ClusterName,
		Controllers: c.Controllers,
		ExtraArgs: []string{
			"--service-account-private-key-file=" + c.ServiceAccountKeyFile,
			"--root-ca-file=" + c.RootCAFile,
			"--use-service-account-credentials=false",
			"--horizontal-pod-autoscaler-sync-period=" + c.HPASyncPeriod.String(),
			"--horizontal-pod-autoscaler-downscale-stabilization=" + c.HPADownscaleWindow.String(),
			"--horizontal-pod-autoscaler-cpu-initialization-period=" + c.HPACPUInitialization.String(),
			"--horizontal-pod-autoscaler-initial-readiness-delay=" + c.HPAInitialReadinessDiff.String(),
		},
	})
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
