// Package up runs the embedded federation control plane (`atoll up`).
package up

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/atoll-dev/atoll/config/crd"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/controlplane"
	"github.com/atoll-dev/atoll/pkg/manager"
)

// ReadyMarker is printed, once, on the line that announces a serving
// control plane; scripts and the test harness wait for it.
const ReadyMarker = "atoll ready"

// Run starts the control plane and the controller-manager, prints the
// ready line and serves until ctx ends or a component fails.
func Run(ctx context.Context, cfg *cmds.Up) error {
	started := time.Now()
	logFile := cfg.Logging.LogFile
	if logFile == "DATA-DIR/logs/atoll.log" {
		logFile = filepath.Join(cfg.DataDir, "logs", "atoll.log")
	}
	if err := logging.Setup(logFile, cfg.Logging.Verbosity); err != nil {
		return err
	}
	docs, err := crd.All()
	if err != nil {
		return err
	}
	if logFile != "" {
		fmt.Fprintf(os.Stderr, "atoll: starting control plane in %s (logs: %s)\n", cfg.DataDir, logFile)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: cfg.DataDir, Listen: cfg.Listen, CRDs: docs})
	if err != nil {
		return err
	}
	defer cp.Stop()

	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgr, err := manager.New(mgrCtx, cp.Config, manager.Options{
		MetricsBindAddress:      cfg.Manager.MetricsBindAddress,
		HealthProbeBindAddress:  cfg.Manager.HealthProbeBindAddress,
		LeaderElect:             cfg.Manager.LeaderElect,
		LeaderElectionNamespace: cfg.Manager.LeaderElectionNamespace,
	})
	if err != nil {
		return err
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	select {
	case <-mgr.Elected():
	case err := <-mgrDone:
		return fmt.Errorf("controller-manager: %w", err)
	case <-cp.Done():
		return cp.Wait()
	case <-ctx.Done():
		return nil
	}

	fmt.Printf("%s: kubeconfig=%s server=%s (%.1fs)\n", ReadyMarker, cp.KubeconfigPath, cp.Config.Host,
		time.Since(started).Seconds())

	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "atoll: stopping")
	case err := <-mgrDone:
		if err == nil {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("controller-manager: %w", err)
	case <-cp.Done():
		return cp.Wait()
	}
	stopManager()
	if err := <-mgrDone; err != nil {
		fmt.Fprintf(os.Stderr, "atoll: controller-manager: %v\n", err)
	}
	return cp.Stop()
}
