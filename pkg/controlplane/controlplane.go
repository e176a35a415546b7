// Package controlplane runs atoll's embedded federation control plane: an
// etcd server and a real kube-apiserver in this process, with atoll's CRDs
// installed. It is the only place besides the member simulator that imports
// k8s.io/kubernetes (DESIGN.md section 8).
package controlplane

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/atoll-dev/atoll/pkg/admission/discovery"
	"github.com/atoll-dev/atoll/pkg/controlplane/datadir"
	"github.com/atoll-dev/atoll/pkg/controlplane/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/crdinstall"
)

// Options configure an embedded control plane.
type Options struct {
	// DataDir holds etcd data, certificates, the kubeconfig and logs.
	DataDir string
	// Listen is host:port of the API server. Port 0 picks a free port and
	// keeps it across restarts while it stays free.
	Listen string
	// CRDs are installed (server-side apply) and awaited before Start returns.
	CRDs [][]byte
	// ReadyTimeout bounds how long Start waits for the API server.
	ReadyTimeout time.Duration
	// Lock, when set, is the caller's lock on DataDir (taken before it
	// started other work there); Start then releases it on stop.
	Lock *datadir.Lock
	// ContextName names the kubeconfig's context and cluster ("atoll").
	ContextName string
	// ExtraAPIServerArgs, when set, returns more kube-apiserver flags; it
	// runs with the data dir locked and the CA in place, so it can issue
	// more certificates (the member simulator's aggregation layer does).
	ExtraAPIServerArgs func(ca *pki.CA, files pki.Files) ([]string, error)
	// ClientUser, when set, gets a bearer token for this start (no groups;
	// clientUserToken) and ControlPlane.ClientConfig authenticates as it:
	// the identity the embedded controller-manager runs with, whose rights
	// RBAC decides.
	ClientUser string
}

// ControlPlane is a running embedded control plane.
type ControlPlane struct {
	// KubeconfigPath is the admin kubeconfig written into the data dir.
	KubeconfigPath string
	// Config is an admin client config for the API server.
	Config *rest.Config
	// Kubeconfig is the content of KubeconfigPath.
	Kubeconfig kubeconfig.Spec
	// ClientConfig authenticates as Options.ClientUser (nil without one).
	ClientConfig *rest.Config

	// admissionDiscovery refreshes the API server's admission REST
	// mapper (RefreshAdmissionDiscovery).
	admissionDiscovery discovery.Refresher

	lock      *datadir.Lock
	etcd      *embed.Etcd
	cancel    context.CancelFunc
	apiserver <-chan error
	done      chan struct{}
	stopOnce  sync.Once
	err       error
}

// RefreshAdmissionDiscovery makes the API server's admission plugins read
// discovery again on their next lookup, rather than at the API server's
// next 30-second reset: after a restart they may have cached it before
// atoll's CRDs were served (package admission/discovery). Reports whether
// there was anything to refresh.
func (cp *ControlPlane) RefreshAdmissionDiscovery() bool { return cp.admissionDiscovery.Refresh() }

// Paths inside a data directory.
const (
	KubeconfigFile = "kubeconfig"
	portsFile      = "ports.json"
	pkiDir         = "pki"
	etcdDir        = "etcd"
	logDir         = "logs"
	adminUser      = "atoll-admin"
	contextName    = "atoll"
)

// Start brings the control plane up and returns once the API server is
// ready and the CRDs are established. Cancelling ctx stops it; Wait
// returns when everything has stopped.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("resolving --data-dir %q: %w", opts.DataDir, err)
	}
	host, port, err := splitListen(opts.Listen)
	if err != nil {
		return nil, err
	}

	lock := opts.Lock
	if lock == nil {
		if lock, err = datadir.Acquire(dir); err != nil {
			return nil, err
		}
	}
	cp := &ControlPlane{lock: lock, done: make(chan struct{})}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cp.cancel = cancel
	defer func() {
		if err != nil {
			cp.shutdown()
		}
	}()

	for _, d := range []string{filepath.Join(dir, logDir), filepath.Join(dir, etcdDir)} {
		if err := ensureDir(d); err != nil {
			return nil, err
		}
	}
	files := pki.Files{Dir: filepath.Join(dir, pkiDir)}
	creds, err := ensurePKI(files, host)
	if err != nil {
		return nil, err
	}
	var extraArgs []string
	if opts.ExtraAPIServerArgs != nil {
		if extraArgs, err = opts.ExtraAPIServerArgs(creds.ca, files); err != nil {
			return nil, err
		}
	}
	if opts.ContextName == "" {
		opts.ContextName = contextName
	}

	ports, err := loadPorts(filepath.Join(dir, portsFile))
	if err != nil {
		return nil, err
	}
	if port != 0 {
		ports.APIServer = port
	}
	listener, err := listenAPIServer(host, ports, port != 0)
	if err != nil {
		return nil, err
	}

	etcd, etcdURL, err := startEtcd(runCtx, filepath.Join(dir, etcdDir), filepath.Join(dir, logDir), files, ports)
	if err != nil {
		_ = listener.Close()
		return nil, err
	}
	cp.etcd = etcd
	if err := ports.save(filepath.Join(dir, portsFile)); err != nil {
		_ = listener.Close()
		return nil, err
	}

	userToken, tokenFile, err := clientUserToken(files, opts.ClientUser, extraArgs)
	if err != nil {
		_ = listener.Close()
		return nil, err
	}
	defer func() {
		if err != nil && tokenFile != "" {
			_ = os.Remove(tokenFile) // the API server's start failed; the token is void
		}
	}()
	apiserverDone, err := RunAPIServer(runCtx, APIServerConfig{
		Listener:      listener,
		EtcdServers:   []string{etcdURL},
		PKI:           files,
		TokenAuthFile: tokenFile,
		ExtraArgs:     extraArgs,

		AdmissionDiscovery: &cp.admissionDiscovery,
	})
	if err != nil {
		_ = listener.Close()
		return nil, err
	}
	cp.apiserver = apiserverDone

	spec := kubeconfig.Spec{
		Context:    opts.ContextName,
		User:       adminUser,
		Server:     "https://" + net.JoinHostPort(clientHost(host), strconv.Itoa(ports.APIServer)),
		CAPEM:      creds.caPEM,
		ClientCert: creds.adminCert,
		ClientKey:  creds.adminKey,
	}
	cp.Config, err = kubeconfig.RESTConfig(spec)
	if err != nil {
		return nil, fmt.Errorf("building admin client config: %w", err)
	}
	cp.Config.QPS, cp.Config.Burst = 100, 200
	if opts.ClientUser != "" {
		cp.ClientConfig = &rest.Config{Host: spec.Server, BearerToken: userToken,
			TLSClientConfig: rest.TLSClientConfig{CAData: creds.caPEM}}
	}

	readyCtx, readyCancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer readyCancel()
	if err := WaitReady(readyCtx, cp.Config, apiserverDone); err != nil {
		return nil, err
	}
	if tokenFile != "" {
		// Read once when the API server started: from here on the token
		// lives only in this process.
		if err := os.Remove(tokenFile); err != nil {
			return nil, fmt.Errorf("removing the token file once read: %w", err)
		}
	}
	cp.KubeconfigPath = filepath.Join(dir, KubeconfigFile)
	cp.Kubeconfig = spec
	if err := kubeconfig.Write(cp.KubeconfigPath, spec); err != nil {
		return nil, err
	}
	if err := crdinstall.Apply(readyCtx, cp.Config, opts.CRDs); err != nil {
		return nil, err
	}

	go cp.watch(runCtx)
	return cp, nil
}

// Stop stops the control plane and waits for it.
func (cp *ControlPlane) Stop() error {
	cp.cancel()
	return cp.Wait()
}

// Done is closed once the control plane has stopped.
func (cp *ControlPlane) Done() <-chan struct{} { return cp.done }

// Wait blocks until the control plane has stopped and returns why it
// stopped, nil for a requested stop.
func (cp *ControlPlane) Wait() error {
	<-cp.done
	return cp.err
}

// watch turns an unexpected API server or etcd exit into a stop of the
// whole control plane, so the process never serves half a control plane.
func (cp *ControlPlane) watch(runCtx context.Context) {
	var err error
	select {
	case err = <-cp.apiserver:
		cp.apiserver = nil
		if runCtx.Err() == nil {
			err = fmt.Errorf("kube-apiserver exited unexpectedly: %v", err) //nolint:errorlint // err may be nil (a clean exit); %w would print %!w(<nil>)
		}
	case err = <-cp.etcd.Err():
		if runCtx.Err() == nil {
			err = fmt.Errorf("etcd exited unexpectedly: %w", err)
		}
	case <-runCtx.Done():
	}
	if runCtx.Err() != nil {
		err = nil // a requested stop
	}
	cp.err = err
	cp.shutdown()
}

func (cp *ControlPlane) shutdown() {
	cp.stopOnce.Do(cp.stop)
}

func (cp *ControlPlane) stop() {
	cp.cancel()
	if cp.apiserver != nil {
		select {
		case err := <-cp.apiserver:
			if err != nil {
				klog.V(1).InfoS("kube-apiserver stopped", "err", err)
			}
		case <-time.After(30 * time.Second):
			klog.InfoS("kube-apiserver did not stop within 30s; stopping etcd anyway")
		}
	}
	if cp.etcd != nil {
		cp.etcd.Close()
	}
	_ = cp.lock.Release()
	close(cp.done)
}
