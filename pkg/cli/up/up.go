// Package up runs the embedded federation control plane (`atoll up`).
//
// `atoll up` is a supervisor: it takes the data-dir lock, then runs the
// control plane (etcd, kube-apiserver and the controllers) as one child
// process, `atoll up … --serve-control-plane`, and the simulated members as
// other children, and keeps each in the state its fault file asks for (see
// package supervisor and docs/design/0005-control-plane-process.md).
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
	"github.com/atoll-dev/atoll/pkg/admission"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/controllermanager"
	"github.com/atoll-dev/atoll/pkg/cli/join"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/cli/profiling"
	"github.com/atoll-dev/atoll/pkg/cli/sim"
	"github.com/atoll-dev/atoll/pkg/controlplane"
	"github.com/atoll-dev/atoll/pkg/controlplane/datadir"
	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/rbac"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/pkg/sim/supervisor"
)

// ReadyMarker is printed, once, on the line that announces a serving
// control plane; scripts and the test harness wait for it.
const ReadyMarker = "atoll ready"

const (
	defaultLogFile = "DATA-DIR/logs/atoll.log"
	// controlPlaneLog is the control-plane process's log next to atoll.log.
	controlPlaneLog = "control-plane.log"
	// lockFD is the descriptor the control-plane process inherits the
	// data-dir lock on (the first of exec.Cmd.ExtraFiles).
	lockFD = 3
	// controlPlaneStopTimeout bounds a clean stop of the control plane:
	// kube-apiserver drains for up to 30s before etcd stops.
	controlPlaneStopTimeout = 40 * time.Second
)

// Run starts the control-plane process and the members, prints the ready
// line and supervises them until ctx ends. With cfg.ServeControlPlane it is
// the control-plane process instead (serveControlPlane).
func Run(ctx context.Context, cfg *cmds.Up) error {
	if cfg.ServeControlPlane {
		return serveControlPlane(ctx, cfg)
	}
	started := time.Now()
	logFile := cfg.Logging.LogFile
	if logFile == defaultLogFile {
		logFile = filepath.Join(cfg.DataDir, "logs", "atoll.log")
	}
	if err := logging.Setup(logFile, cfg.Logging.Verbosity); err != nil {
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
	defer func() { _ = lock.Release() }()

	cp, err := newControlPlaneProcess(cfg, lock)
	if err != nil {
		return err
	}
	// Members start while the control plane does: they are independent
	// processes and most of the start-up time is theirs.
	members, membersReady, err := startMembers(ctx, cfg)
	if err != nil {
		return err
	}
	defer members.Stop()
	cpReady := make(chan error, 1)
	go func() { cpReady <- cp.sup.Start(ctx) }()
	defer cp.sup.Stop() // before the members stop (defers run last first)

	// The first failure ends the wait; the deferred Stops end the rest.
	for range 2 {
		select {
		case err = <-cpReady:
		case err = <-membersReady:
		}
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	var st simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.ControlPlaneStatusFile(cfg.DataDir), &st); err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(cfg.DataDir, controlplane.KubeconfigFile)
	if abs, err := filepath.Abs(kubeconfigPath); err == nil {
		kubeconfigPath = abs
	}

	// Members join once, here; a restarted control plane finds them in etcd.
	if cfg.JoinMembers {
		members.join(ctx, cfg.DataDir, kubeconfigPath)
	}
	go members.Run(ctx)
	go cp.sup.Run(ctx)

	fmt.Printf("%s: kubeconfig=%s server=%s members=%d (%.1fs)\n", ReadyMarker, kubeconfigPath, st.APIServer,
		cfg.Members, time.Since(started).Seconds())
	for _, m := range members.Names() {
		fmt.Fprintf(os.Stderr, "atoll: member %s: kubeconfig=%s\n", m, simdir.MemberKubeconfig(cfg.DataDir, m))
	}

	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "atoll: stopping")
	return nil
}

// controlPlaneProcess is the supervised control-plane child.
type controlPlaneProcess struct {
	sup *supervisor.Supervisor
}

// newControlPlaneProcess prepares (does not start) the control-plane child:
// this binary with this command line plus an explicit --listen (the same
// address on every restart), its own --log-file and --serve-control-plane,
// inheriting lock as descriptor 3. A stop fault left over from an earlier
// `atoll up` is lifted: starting atoll up means starting its control plane.
func newControlPlaneProcess(cfg *cmds.Up, lock *datadir.Lock) (*controlPlaneProcess, error) {
	if len(os.Args) < 2 || os.Args[1] != "up" {
		return nil, fmt.Errorf("atoll up: cannot re-run %q as the control-plane process", os.Args)
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the atoll binary for the control-plane process: %w", err)
	}
	listen, err := controlplane.ResolveListen(cfg.DataDir, cfg.Listen)
	if err != nil {
		return nil, err
	}
	var fault simdir.Fault
	if _, err := simdir.ReadJSON(simdir.ControlPlaneFaultFile(cfg.DataDir), &fault); err != nil {
		return nil, err
	}
	if fault.Stopped {
		if _, _, err := sim.UpdateControlPlaneFault(cfg.DataDir, func(f *simdir.Fault) { f.Stopped = false }); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "atoll: lifted the control-plane stop fault recorded in %s\n", simdir.ControlPlaneFaultFile(cfg.DataDir))
	}
	args := append(append([]string(nil), os.Args[1:]...),
		"--listen", listen,
		"--log-file", childLogFile(cfg.DataDir, cfg.Logging.LogFile),
		"--"+cmds.ServeControlPlaneFlag)
	sup := supervisor.New(supervisor.Options{
		Binary:  bin,
		DataDir: cfg.DataDir,
		Members: []supervisor.MemberSpec{{
			Name:       simdir.ControlPlaneTarget,
			Args:       args,
			Dir:        simdir.ControlPlaneDir(cfg.DataDir),
			ExtraFiles: []*os.File{lock.File()},
		}},
		Log:         klog.Background().WithName("control-plane"),
		StopTimeout: controlPlaneStopTimeout,
	})
	return &controlPlaneProcess{sup: sup}, nil
}

// childLogFile is the control-plane process's --log-file for atoll up's
// --log-file: control-plane.log beside atoll.log (or beside the file the
// user chose); with "" (standard error) the child logs to its standard
// error too, which goes to DATA-DIR/control-plane/logs/process.log.
func childLogFile(dataDir, logFile string) string {
	switch logFile {
	case "":
		return ""
	case defaultLogFile:
		return filepath.Join(dataDir, "logs", controlPlaneLog)
	}
	return filepath.Join(filepath.Dir(logFile), controlPlaneLog)
}

// serveControlPlane is the control-plane process: it starts etcd,
// kube-apiserver and the controller-manager in the data dir its parent
// locked, reports Ready in DATA-DIR/control-plane/status.json and serves
// until ctx ends (SIGTERM from the parent) or a component fails (then it
// exits with an error and the parent restarts it).
func serveControlPlane(ctx context.Context, cfg *cmds.Up) error {
	if err := logging.Setup(cfg.Logging.LogFile, cfg.Logging.Verbosity); err != nil {
		return err
	}
	// The controllers run in this process; so does the API server, whose
	// own profiling is off.
	profiling.SampleHeapOnlyWhenProfiled(cfg.Manager.PprofBindAddress)
	lock, err := datadir.Inherit(cfg.DataDir, os.NewFile(lockFD, datadir.LockFile))
	if err != nil {
		return fmt.Errorf("--%s runs only as the child of atoll up: %w", cmds.ServeControlPlaneFlag, err)
	}
	docs, err := crd.All()
	if err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: cfg.DataDir, Listen: cfg.Listen, CRDs: docs, Lock: lock,
		ClientUser: rbac.ControllerManagerUser,
		// Pods are templates here, never run: without ServiceAccount
		// admission a Pod needs no ServiceAccount in the control plane
		// (Karmada disables the plugin too); members admit it for real.
		ExtraAPIServerArgs: func(*pki.CA, pki.Files) ([]string, error) {
			return append([]string{"--disable-admission-plugins=ServiceAccount"}, cfg.KubeAPIServerArgs...), nil
		}})
	if err != nil {
		_ = lock.Release()
		return err
	}
	defer func() { _ = cp.Stop() }()
	if err := admission.Apply(ctx, cp.Config); err != nil {
		return err
	}
	// Ready means policies can be written: not before the API server
	// evaluates the tenancy admission policies.
	start := time.Now()
	if err := admission.WaitEffective(ctx, cp.Config, cp.RefreshAdmissionDiscovery); err != nil {
		return err
	}
	klog.InfoS("Admission policies effective", "after", time.Since(start).Round(time.Millisecond))
	// The controller-manager runs with the least privilege that works, not
	// as the admin.
	if err := rbac.Apply(ctx, cp.Config, rbac.UserSubject(rbac.ControllerManagerUser)); err != nil {
		return err
	}

	// atoll's controller-manager is built first: what fails it (a taken
	// metrics port) must end this process with its error before the
	// kube-controller-manager runs, which can exit the process on its own
	// once the API server stops, leaving no error behind.
	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgr, err := manager.New(mgrCtx, cp.ClientConfig, controllermanager.ManagerOptions(cfg.Manager))
	if err != nil {
		return err
	}

	// Namespace deletion and garbage collection, as Karmada's control plane
	// runs them. Each controller acts as its own ServiceAccount, with the
	// API server's bootstrap role for it, not as the admin.
	kcmDone, err := controlplane.RunControllerManager(ctx, controlplane.ControllerManagerConfig{
		Kubeconfig: cp.KubeconfigPath, ClusterName: "atoll", Controllers: controlplane.ControlPlaneControllers,
		ExtraArgs: []string{"--use-service-account-credentials=true"},
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
	case err := <-kcmDone:
		return fmt.Errorf("kube-controller-manager stopped: %v", err) //nolint:errorlint // err may be nil; %w would print %!w(<nil>)
	case <-cp.Done():
		return cp.Wait()
	case <-ctx.Done():
		return nil
	}
	st := simdir.MemberStatus{PID: os.Getpid(), Ready: true, APIServer: cp.Config.Host, Updated: time.Now()}
	if err := simdir.WriteJSON(simdir.ControlPlaneStatusFile(cfg.DataDir), st); err != nil {
		return err
	}
	klog.InfoS("Control plane ready", "pid", st.PID, "server", st.APIServer, "kubeconfig", cp.KubeconfigPath)

	select {
	case <-ctx.Done():
	case err := <-mgrDone:
		if err == nil {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("controller-manager: %w", err)
	case err := <-kcmDone:
		return fmt.Errorf("kube-controller-manager stopped: %v", err) //nolint:errorlint // err may be nil; %w would print %!w(<nil>)
	case <-cp.Done():
		return cp.Wait()
	}
	stopManager()
	if err := <-mgrDone; err != nil {
		klog.ErrorS(err, "Controller-manager stopped with an error")
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
