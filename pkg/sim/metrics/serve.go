package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

const (
	// ServiceName and ServiceNamespace name the Service the APIService
	// points at, the usual place of metrics-server.
	ServiceName      = "metrics-server"
	ServiceNamespace = metav1.NamespaceSystem
	// ServingDNSName is the name the aggregator expects in the serving
	// certificate: it always verifies the backend as SERVICE.NAMESPACE.svc,
	// whatever address it dials.
	ServingDNSName = ServiceName + "." + ServiceNamespace + ".svc"
	// APIServiceName names the APIService of metrics.k8s.io/v1beta1.
	APIServiceName = "v1beta1.metrics.k8s.io"

	shutdownTimeout = 5 * time.Second
)

// Serve serves h over TLS on l until ctx is done, then shuts down cleanly
// and returns nil.
//
// Every client must present a certificate signed by one of clientCAs. The
// only client is the member's kube-apiserver: its aggregator proxies
// metrics.k8s.io requests with its proxy client certificate, which is signed
// by the request-header (front proxy) CA, so that CA is what clientCAs should
// hold. The API server has already authenticated and authorized the end
// user before it proxies, so trusting the front proxy is enough here; the
// user it passes in the X-Remote-User headers is not checked again.
func Serve(ctx context.Context, l net.Listener, h http.Handler, servingCert tls.Certificate, clientCAs *x509.CertPool) error {
	if clientCAs == nil {
		return errors.New("serving metrics: no client CAs: the metrics API must only be reachable through the API server")
	}
	srv := &http.Server{
		Handler: h,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{servingCert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    clientCAs,
		},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          log.New(errorLogWriter{addr: l.Addr().String()}, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(l, "", "") }()

	select {
	case err := <-served:
		return fmt.Errorf("serving metrics on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if err != nil {
		_ = srv.Close()
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serving metrics on %s: %w", l.Addr(), serveErr)
	}
	if err != nil {
		return fmt.Errorf("shutting down the metrics server on %s: %w", l.Addr(), err)
	}
	return nil
}

// errorLogWriter sends net/http's error log to klog. Failed TLS handshakes
// (clients without a valid certificate) are routine and logged at V(2).
type errorLogWriter struct{ addr string }

func (e errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	logger := klog.Background().WithValues("addr", e.addr)
	if strings.Contains(msg, "TLS handshake error") {
		logger.V(2).Info("Metrics server connection failed", "msg", msg)
	} else {
		logger.Info("Metrics server error", "msg", msg)
	}
	return len(p), nil
}

// APIService registers metrics.k8s.io/v1beta1 with the aggregator, served by
// the Service of Service(port). caBundle verifies the serving certificate,
// which must carry the DNS name ServingDNSName.
func APIService(port int32, caBundle []byte) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{Kind: "APIService", APIVersion: apiregistrationv1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: APIServiceName},
		Spec: apiregistrationv1.APIServiceSpec{
			Service: &apiregistrationv1.ServiceReference{
				Namespace: ServiceNamespace,
				Name:      ServiceName,
				Port:      &port,
			},
			Group:                metricsv1beta1.GroupName,
			Version:              metricsv1beta1.SchemeGroupVersion.Version,
			CABundle:             caBundle,
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
}

// Service is the ExternalName Service kube-system/metrics-server that points
// the aggregator at localhost:port. For an ExternalName Service the
// aggregator dials https://EXTERNALNAME:PORT directly (with the APIService's
// port) and does not look for endpoints, which a process outside the cluster
// network would not have. So the metrics server listens on 127.0.0.1:port,
// and since the aggregator verifies it under the TLS server name
// ServingDNSName (metrics-server.kube-system.svc), its serving certificate
// must carry that DNS name.
func Service(port int32) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: ServiceNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports: []corev1.ServicePort{{
				Name:       "https",
				Protocol:   corev1.ProtocolTCP,
				Port:       port,
				TargetPort: intstr.FromInt32(port),
			}},
		},
	}
}
