// Package controllermanager runs atoll's controllers standalone against an
// existing API server (`atoll controller-manager`).
package controllermanager

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/cli/profiling"
	"github.com/atoll-dev/atoll/pkg/manager"
)

// Run serves the controller-manager until ctx ends.
func Run(ctx context.Context, cfg *cmds.ControllerManager) error {
	if err := logging.Setup(cfg.Logging.LogFile, cfg.Logging.Verbosity); err != nil {
		return err
	}
	profiling.SampleHeapOnlyWhenProfiled(cfg.Manager.PprofBindAddress)
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	opts := ManagerOptions(cfg.Manager)
	opts.Shards = cfg.Shards
	mgr, err := manager.New(ctx, restCfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	c, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return c, nil
}

// ManagerOptions turns the controller-manager flags (shared by `up` and
// `controller-manager`) into manager options.
func ManagerOptions(m cmds.Manager) manager.Options {
	return manager.Options{
		Controllers:             m.Controllers,
		KubeAPIQPS:              m.KubeAPIQPS,
		KubeAPIBurst:            m.KubeAPIBurst,
		ClusterStatusPeriod:     m.ClusterStatusPeriod,
		ClusterSuccessThreshold: m.ClusterSuccessThreshold,
		ClusterFailureThreshold: m.ClusterFailureThreshold,
		MemberSweepPeriod:       m.MemberSweepPeriod,
		BindingStatusWindow:     m.BindingStatusWindow,
		WithdrawWhenNoFit:       m.WhenNoClusterFits == "Withdraw",
		EventTypes:              m.EventTypes,
		Failover: manager.FailoverOptions{
			NoScheduleOnly:            !m.Failover.NoExecuteTaints,
			PurgeMode:                 policyv1alpha1.PurgeMode(m.Failover.PurgeMode),
			EvictionRate:              m.Failover.EvictionRate,
			EvictionBurst:             m.Failover.EvictionBurst,
			GracePeriod:               m.Failover.GracefulEvictionTimeout,
			UnhealthyClusterThreshold: m.Failover.UnhealthyClusterThreshold,
		},
		Workers: manager.WorkerOptions{
			Detector:        m.Workers.ResourceTemplate,
			Executor:        m.Workers.ResourceBinding,
			ClusterExecutor: m.Workers.ClusterResourceBinding,
			Scheduler:       m.Workers.Scheduler,
			Cluster:         m.Workers.Cluster,
			Dependencies:    m.Workers.DependentResource,
		},
		Rebalance: manager.RebalanceOptions{
			MaxInFlight:  m.RebalanceMaxInFlight,
			SettleWindow: m.RebalanceSettleWindow,
		},
		MetricsBindAddress:      m.MetricsBindAddress,
		HealthProbeBindAddress:  m.HealthProbeBindAddress,
		PprofBindAddress:        m.PprofBindAddress,
		LeaderElect:             m.LeaderElect,
		LeaderElectionNamespace: m.LeaderElectionNamespace,
	}
}
