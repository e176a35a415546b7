// Package up runs the embedded federation control plane (`atoll up`).
package up

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/atoll-dev/atoll/config/crd"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/controllermanager"
	"github.com/atoll-dev/atoll/pkg/cli/join"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/controlplane"
	"github.com/atoll-dev/atoll/pkg/controlplane/datadir"
	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/pkg/sim/supervisor"
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
		fmt.Fprintf(os.Stderr, "atoll: starting control plane and %d member(s) in %s (logs: %s)\n", cfg.Members, cfg.DataDir, logFile)
	}

	// The data dir is locked before anything else runs in it.
	lock, err := datadir.Acquire(cfg.DataDir)
	if err != nil {
		return err
	}
	// Members start while the control plane does: they are independent
	// processes and most of the start-up time is theirs.
	members, membersReady, err := startMembers(ctx, cfg)
	if err != nil {
		lock.Release()
		return err
	}
	defer members.Stop()

	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: cfg.DataDir, Listen: cfg.Listen, CRDs: docs, Lock: lock})
	if err != nil {
		lock.Release()
		return err
	}
	defer cp.Stop()
	if err := <-membersReady; err != nil {
		return err
	}
	go members.Run(ctx)

	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgr, err := manager.New(mgrCtx, cp.Config, controllermanager.ManagerOptions(cfg.Manager))
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

	if cfg.JoinMembers {
		members.join(ctx, cfg.DataDir, cp.KubeconfigPath)
	}

	fmt.Printf("%s: kubeconfig=%s server=%s members=%d (%.1fs)\n", ReadyMarker, cp.KubeconfigPath, cp.Config.Host,
		cfg.Members, time.Since(started).Seconds())
	for _, m := range members.Names() {
		fmt.Fprintf(os.Stderr, "atoll: member %s: kubeconfig=%s\n", m, simdir.MemberKubeconfig(cfg.DataDir, m))
	}

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

// memberSet is the supervised simulated members (none when --members 0).
type memberSet struct {
	sup   *supervisor.Supervisor
	specs []supervisor.MemberSpec
	names []string
}

// join registers every member with the control plane through its fault
// proxy, so the federation sees what `atoll sim fault` does to it. Joining
// is idempotent (server-side apply), so a restart writes nothing new; a
// member that cannot be reached now (stopped by a fault) keeps the Cluster
// it had and is reported, not fatal.
func (m *memberSet) join(ctx context.Context, dataDir, kubeconfig string) {
	var wg sync.WaitGroup
	for _, spec := range m.specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := join.Join(ctx, &cmds.Join{
				Name:              spec.Name,
				Kubeconfig:        kubeconfig,
				ClusterKubeconfig: simdir.ProxyKubeconfig(dataDir, spec.Name),
				Region:            spec.Region,
				Zone:              spec.Zone,
				Provider:          spec.Provider,
				Out:               io.Discard,
			})
			if err != nil {
				fmt.Fprintf(os.Stderr, "atoll: joining member %s: %v\n", spec.Name, err)
			}
		}()
	}
	wg.Wait()
}

func (m *memberSet) Names() []string { return m.names }

func (m *memberSet) Run(ctx context.Context) {
	if m.sup != nil {
		m.sup.Run(ctx)
	}
}

func (m *memberSet) Stop() {
	if m.sup != nil {
		m.sup.Stop()
	}
}

// startMembers starts the simulated members; the channel reports when all
// are ready.
func startMembers(ctx context.Context, cfg *cmds.Up) (*memberSet, <-chan error, error) {
	ready := make(chan error, 1)
	if cfg.Members <= 0 {
		ready <- nil
		return &memberSet{}, ready, nil
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("locating the atoll binary for member processes: %w", err)
	}
	specs := supervisor.DefaultMembers(cfg.Members)
	set := &memberSet{specs: specs}
	for i := range specs {
		specs[i].ExtraArgs = append(specs[i].ExtraArgs, cfg.MemberArgs...)
		set.names = append(set.names, specs[i].Name)
	}
	set.sup = supervisor.New(supervisor.Options{Binary: bin, DataDir: cfg.DataDir, Members: specs, Log: klog.Background()})
	go func() { ready <- set.sup.Start(ctx) }()
	return set, ready, nil
}
