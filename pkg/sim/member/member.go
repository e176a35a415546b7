// Package member runs one simulated member cluster in this process (`atoll
// sim cluster`): embedded etcd and kube-apiserver with the aggregation
// layer, the real kube-controller-manager and kube-scheduler, simulated
// kubelets, a metrics.k8s.io server fed by the world model, and the fault
// proxy through which the federation reaches the member. It imports
// k8s.io/kubernetes (DESIGN.md section 8).
package member

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/atoll-dev/atoll/pkg/controlplane"
	"github.com/atoll-dev/atoll/pkg/controlplane/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/sim/faultproxy"
	"github.com/atoll-dev/atoll/pkg/sim/kubelet"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/pkg/util/freeport"
)

// ReadyMarker starts the line a member prints once it serves.
const ReadyMarker = "atoll member ready:"

// Options configure a simulated member.
type Options struct {
	Name string
	// DataDir is the world's data dir; the member lives in DataDir/members/Name.
	DataDir       string
	Nodes         int
	NodeCPU       resource.Quantity
	NodeMemory    resource.Quantity
	MaxPods       int
	PodReadyDelay time.Duration
	// JobPodRunTime: how long a Job's pod runs before it succeeds.
	JobPodRunTime time.Duration
	Region        string
	Zone          string
	Provider      string
	// HPASyncPeriod and HPADownscaleWindow tune the HPA controller so tests
	// run in seconds instead of minutes.
	HPASyncPeriod      time.Duration
	HPADownscaleWindow time.Duration
	// APIOnly runs only etcd, kube-apiserver, the fault proxy and the
	// ServiceAccount token controller (joining needs a token): no workload
	// controllers, scheduler, kubelets or metrics, so that scale
	// benchmarks measure the federation instead of the simulator. Objects
	// are stored and served; nothing acts on them.
	APIOnly bool
}

// Run serves the member until ctx ends or a component fails.
func Run(ctx context.Context, opts Options) error {
	started := time.Now()
	dir := simdir.MemberDir(opts.DataDir, opts.Name)
	front := pki.Files{Dir: filepath.Join(dir, "pki", "front-proxy")}
	metricsListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("binding the metrics server: %w", err)
	}
	defer func() { _ = metricsListener.Close() }()

	var memberCA *pki.CA
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir:     dir,
		ContextName: opts.Name,
		ExtraAPIServerArgs: func(ca *pki.CA, files pki.Files) ([]string, error) {
			memberCA = ca
			return aggregationArgs(front, files)
		},
	})
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }() // Run returns why it stopped
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}

	proxy, err := startProxy(ctx, dir, cp)
	if err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 8)
	watch := func(name string, done <-chan error) {
		go func() {
			if err := <-done; runCtx.Err() == nil {
				failed <- fmt.Errorf("%s stopped: %v", name, err) //nolint:errorlint // err may be nil (a clean exit); %w would print %!w(<nil>)
			}
		}()
	}

	if opts.APIOnly {
		// Joining needs a ServiceAccount token Secret filled in; the token
		// controller does only that, and is idle afterwards.
		kcmDone, err := runControllerManager(runCtx, memberKCMConfig(opts, dir, cp, tokenControllers))
		if err != nil {
			return err
		}
		watch("kube-controller-manager", kcmDone)
	} else if err := runWorkloadComponents(runCtx, opts, dir, cp, client, memberCA, front, metricsListener, watch); err != nil {
		return err
	}

	status := &statusWriter{dataDir: opts.DataDir, name: opts.Name}
	if err := status.update(func(s *simdir.MemberStatus) {
		*s = simdir.MemberStatus{PID: os.Getpid(), Ready: true, APIServer: cp.Config.Host, Proxy: "https://" + proxy.Addr().String()}
	}); err != nil {
		return err
	}
	go followFaults(runCtx, opts.DataDir, opts.Name, proxy, status)
	fmt.Printf("%s %s kubeconfig=%s proxy=%s (%.1fs)\n", ReadyMarker, opts.Name, cp.KubeconfigPath,
		"https://"+proxy.Addr().String(), time.Since(started).Seconds())

	select {
	case <-ctx.Done():
		status.markStopped()
		return nil
	case err := <-failed:
		status.markStopped()
		return err
	case <-cp.Done():
		status.markStopped()
		return cp.Wait()
	}
}

// runWorkloadComponents starts what makes the member act on its objects:
// kube-controller-manager, kube-scheduler, the simulated kubelets, the
// metrics server and the world's view of Ready pods.
func runWorkloadComponents(runCtx context.Context, opts Options, dir string, cp *controlplane.ControlPlane,
	client kubernetes.Interface, memberCA *pki.CA, front pki.Files, metricsListener net.Listener,
	watch func(string, <-chan error)) error {
	kcmDone, err := runControllerManager(runCtx, memberKCMConfig(opts, dir, cp, controllers))
	if err != nil {
		return err
	}
	watch("kube-controller-manager", kcmDone)
	schedDone, err := runScheduler(runCtx, cp.KubeconfigPath)
	if err != nil {
		return err
	}
	watch("kube-scheduler", schedDone)

	kl := kubelet.New(client, kubelet.Options{
		Nodes: kubelet.NodeSpec{
			Prefix: opts.Name, Count: opts.Nodes, CPU: opts.NodeCPU, Memory: opts.NodeMemory,
			MaxPods: opts.MaxPods, Region: opts.Region, Zone: opts.Zone, Provider: opts.Provider,
		},
		PodReadyDelay: opts.PodReadyDelay,
		JobPodRunTime: opts.JobPodRunTime,
	})
	kubeletDone := make(chan error, 1)
	go func() { kubeletDone <- kl.Run(runCtx) }()
	watch("simulated kubelet", kubeletDone)
	if !kl.WaitForSync(runCtx) {
		return errors.New("simulated kubelet did not sync")
	}

	metricsDone, err := startMetrics(runCtx, cp.Config, kl, opts, memberCA, front, metricsListener)
	if err != nil {
		return err
	}
	watch("metrics server", metricsDone)
	go publishReady(runCtx, opts.DataDir, opts.Name, kl)

	return nil
}

// memberKCMConfig is the member's kube-controller-manager running the
// named controllers.
func memberKCMConfig(opts Options, dir string, cp *controlplane.ControlPlane, controllers []string) kcmConfig {
	memberPKI := pki.Files{Dir: filepath.Join(dir, "pki")}
	return kcmConfig{
		Kubeconfig:              cp.KubeconfigPath,
		ClusterName:             opts.Name,
		Controllers:             controllers,
		ServiceAccountKeyFile:   memberPKI.ServiceAccountKey(),
		RootCAFile:              memberPKI.CACert(),
		HPASyncPeriod:           opts.HPASyncPeriod,
		HPADownscaleWindow:      opts.HPADownscaleWindow,
		HPACPUInitialization:    10 * time.Second,
		HPAInitialReadinessDiff: 5 * time.Second,
	}
}

// aggregationArgs sets up the front-proxy CA and client certificate the API
// server uses to reach aggregated APIs (metrics.k8s.io), kept apart from
// the cluster CA as kubeadm does.
func aggregationArgs(front pki.Files, files pki.Files) ([]string, error) {
	now := time.Now()
	ca, err := pki.LoadOrCreateCA(front, "front-proxy-ca", now)
	if err != nil {
		return nil, err
	}
	spec := pki.LeafSpec{CommonName: "front-proxy-client", Client: true}
	if _, _, err := pki.EnsureLeaf(ca, front.ClientCert("front-proxy"), front.ClientKey("front-proxy"), spec, now); err != nil {
		return nil, err
	}
	return []string{
		"--requestheader-client-ca-file=" + front.CACert(),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + front.ClientCert("front-proxy"),
		"--proxy-client-key-file=" + front.ClientKey("front-proxy"),
	}, nil
}

// startProxy runs the fault proxy in front of the API server, on the port
// of the previous run when it is free, and writes the proxy kubeconfig the
// federation control plane uses.
func startProxy(ctx context.Context, dir string, cp *controlplane.ControlPlane) (*faultproxy.Proxy, error) {
	portFile := filepath.Join(dir, "proxy-port")
	l, err := listenRemembered(portFile)
	if err != nil {
		return nil, err
	}
	target, err := hostPort(cp.Config.Host)
	if err != nil {
		return nil, err
	}
	proxy := faultproxy.New(l, target)
	go func() {
		if err := proxy.Run(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Fault proxy stopped")
		}
	}()
	spec := cp.Kubeconfig
	spec.Server = "https://" + l.Addr().String()
	if err := kubeconfig.Write(filepath.Join(dir, "proxy-kubeconfig"), spec); err != nil {
		return nil, err
	}
	return proxy, nil
}

func listenRemembered(portFile string) (net.Listener, error) {
	var remembered int
	if data, err := os.ReadFile(portFile); err == nil {
		remembered, _ = strconv.Atoi(string(data)) // unreadable: a new port
	}
	l, err := freeport.Listen("127.0.0.1", remembered)
	if err != nil {
		return nil, fmt.Errorf("binding the fault proxy: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if port == remembered {
		return l, nil
	}
	if err := pki.WriteFileAtomic(portFile, []byte(strconv.Itoa(port)), 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

func hostPort(server string) (string, error) {
	u, err := parseURL(server)
	if err != nil {
		return "", fmt.Errorf("API server URL %q: %w", server, err)
	}
	return u.Host, nil
}

// servingCert issues the metrics server's certificate from the member CA
// for the name the aggregator verifies.
func servingCert(ca *pki.CA, files pki.Files, dnsName string) (tls.Certificate, error) {
	certPEM, keyPEM, err := pki.EnsureLeaf(ca, filepath.Join(files.Dir, "metrics-server.crt"),
		filepath.Join(files.Dir, "metrics-server.key"),
		pki.LeafSpec{CommonName: "metrics-server", DNSNames: []string{dnsName, "localhost"},
			IPs: []net.IP{net.ParseIP("127.0.0.1")}}, time.Now())
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
