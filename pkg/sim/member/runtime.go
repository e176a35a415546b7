package member

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/clock"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/sim/faultproxy"
	"github.com/atoll-dev/atoll/pkg/sim/kubelet"
	"github.com/atoll-dev/atoll/pkg/sim/metrics"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/pkg/sim/world"
)

// startMetrics serves metrics.k8s.io from the world model and registers it
// with the member's aggregation layer.
func startMetrics(ctx context.Context, cfg *rest.Config, kl *kubelet.Kubelet, opts Options,
	ca *pki.CA, front pki.Files, l net.Listener) (<-chan error, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	memberPKI := pki.Files{Dir: filepath.Join(simdir.MemberDir(opts.DataDir, opts.Name), "pki")}
	cert, err := servingCert(ca, memberPKI, metrics.ServingDNSName)
	if err != nil {
		return nil, err
	}
	frontCA, err := os.ReadFile(front.CACert())
	if err != nil {
		return nil, err
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(frontCA)

	view := world.NewView(opts.DataDir, opts.Name, clock.RealClock{})
	nodes := func() ([]*corev1.Node, error) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		out := make([]*corev1.Node, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	}
	pods := func(ns string, sel labels.Selector) ([]*corev1.Pod, error) {
		if ns == "" {
			return kl.Pods().List(sel)
		}
		return kl.Pods().Pods(ns).List(sel)
	}
	handler := metrics.NewHandler(metrics.Options{Pods: pods, Nodes: nodes, PodUsage: view.PodUsage, Clock: clock.RealClock{}})
	done := make(chan error, 1)
	go func() { done <- metrics.Serve(ctx, l, handler, cert, clientCAs) }()

	port := int32(l.Addr().(*net.TCPAddr).Port)
	if err := applyService(ctx, client, metrics.Service(port)); err != nil {
		return nil, err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	want := metrics.APIService(port, ca.CertPEM)
	apis := agg.ApiregistrationV1().APIServices()
	got, err := apis.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = apis.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		want.ResourceVersion = got.ResourceVersion
		_, err = apis.Update(ctx, want, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("registering APIService %s: %w", want.Name, err)
	}
	return done, nil
}

func applyService(ctx context.Context, client kubernetes.Interface, want *corev1.Service) error {
	svcs := client.CoreV1().Services(want.Namespace)
	got, err := svcs.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = svcs.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		got = got.DeepCopy()
		got.Spec = want.Spec
		_, err = svcs.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("applying Service %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}

// publishReady reports this member's Ready pods per app to the world every
// second; the timestamp doubles as the member's liveness for the world.
func publishReady(ctx context.Context, dataDir, name string, kl *kubelet.Kubelet) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		pods, err := kl.Pods().List(labels.Everything())
		if err == nil {
			if err := world.PublishReady(dataDir, name, world.CountReady(pods), time.Now()); err != nil {
				klog.V(1).InfoS("Publishing ready pods failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// followFaults applies the desired fault state to the proxy whenever its
// generation changes and reports the generation it applied.
func followFaults(ctx context.Context, dataDir, name string, proxy *faultproxy.Proxy, status *statusWriter) {
	var applied int64 = -1
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		var f simdir.Fault
		if _, err := simdir.ReadJSON(simdir.FaultFile(dataDir, name), &f); err != nil {
			klog.V(1).InfoS("Reading fault state failed", "err", err)
		} else if f.Generation != applied {
			if err := proxy.Apply(f); err != nil {
				klog.ErrorS(err, "Applying fault state failed", "generation", f.Generation)
			} else {
				applied = f.Generation
				klog.InfoS("Applied fault state", "partitioned", f.Partitioned, "latency", f.Latency, "generation", f.Generation)
				status.observe(f.Generation)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// statusWriter keeps simdir.StatusFile current.
type statusWriter struct {
	dataDir, name string
	mu            sync.Mutex
	status        simdir.MemberStatus
}

func (w *statusWriter) update(change func(*simdir.MemberStatus)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(&w.status)
	w.status.Updated = time.Now()
	return simdir.WriteJSON(simdir.StatusFile(w.dataDir, w.name), w.status)
}

func (w *statusWriter) observe(gen int64) {
	if err := w.update(func(s *simdir.MemberStatus) { s.ObservedFaultGeneration = gen }); err != nil {
		klog.ErrorS(err, "Writing member status failed")
	}
}

func (w *statusWriter) markStopped() {
	_ = w.update(func(s *simdir.MemberStatus) { s.Ready = false })
}

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }
