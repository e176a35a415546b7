// Package controllermanager runs atoll's controllers standalone against an
// existing API server (`atoll controller-manager`).
package controllermanager

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/manager"
)

// Run serves the controller-manager until ctx ends.
func Run(ctx context.Context, cfg *cmds.ControllerManager) error {
	if err := logging.Setup(cfg.Logging.LogFile, cfg.Logging.Verbosity); err != nil {
		return err
	}
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := manager.New(ctx, restCfg, manager.Options{
		Controllers:             cfg.Manager.Controllers,
		ClusterStatusPeriod:     cfg.Manager.ClusterStatusPeriod,
		ClusterSuccessThreshold: cfg.Manager.ClusterSuccessThreshold,
		ClusterFailureThreshold: cfg.Manager.ClusterFailureThreshold,
		MetricsBindAddress:      cfg.Manager.MetricsBindAddress,
		HealthProbeBindAddress:  cfg.Manager.HealthProbeBindAddress,
		LeaderElect:             cfg.Manager.LeaderElect,
		LeaderElectionNamespace: cfg.Manager.LeaderElectionNamespace,
	})
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
