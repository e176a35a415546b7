package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
)

// testPKI is a serving CA with the metrics server's certificate, and a
// front-proxy CA with the aggregator's client certificate; plus a stranger's
// client certificate from a CA nobody trusts.
type testPKI struct {
	servingCA, frontProxyCA *pki.CA
	serving, proxyClient    tls.Certificate
	strangerClient          tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	ca := func(name string) *pki.CA {
		c, err := pki.LoadOrCreateCA(pki.Files{Dir: filepath.Join(dir, name)}, name, now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	leaf := func(ca *pki.CA, name string, spec pki.LeafSpec) tls.Certificate {
		certPEM, keyPEM, err := pki.EnsureLeaf(ca, filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"), spec, now)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	p := &testPKI{servingCA: ca("serving-ca"), frontProxyCA: ca("front-proxy-ca")}
	p.serving = leaf(p.servingCA, "serving", pki.LeafSpec{
		CommonName: ServingDNSName, DNSNames: []string{ServingDNSName}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
	})
	p.proxyClient = leaf(p.frontProxyCA, "proxy-client", pki.LeafSpec{CommonName: "front-proxy-client", Client: true})
	p.strangerClient = leaf(ca("stranger-ca"), "stranger", pki.LeafSpec{CommonName: "stranger", Client: true})
	return p
}

func TestServeRequiresTrustedClientCertificate(t *testing.T) {
	p := newTestPKI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(p.frontProxyCA.Cert)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, l, NewHandler(newFixture().options()), p.serving, clientCAs) }()

	roots := x509.NewCertPool()
	roots.AddCert(p.servingCA.Cert)
	url := "https://" + l.Addr().String() + "/apis/metrics.k8s.io/v1beta1/nodes/n1"
	get := func(certs ...tls.Certificate) (int, error) {
		client := &http.Client{
			Timeout: 5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{
				RootCAs: roots,
				// What the aggregator verifies, whatever address it dials.
				ServerName:   ServingDNSName,
				Certificates: certs,
			}},
		}
		defer client.CloseIdleConnections()
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}

	cases := map[string]struct {
		certs   []tls.Certificate
		wantErr bool
	}{
		"the aggregator's proxy client certificate is accepted": {certs: []tls.Certificate{p.proxyClient}},
		"no client certificate is rejected":                     {wantErr: true},
		"a certificate from another CA is rejected":             {certs: []tls.Certificate{p.strangerClient}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, err := get(tc.certs...)
			if tc.wantErr {
				if err == nil {
					t.Errorf("GET succeeded with status %d, want a TLS error", code)
				}
				return
			}
			if err != nil || code != http.StatusOK {
				t.Errorf("GET = %d, %v; want 200", code, err)
			}
		})
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts connections after shutdown")
	}
}

func TestServeRefusesWithoutClientCAs(t *testing.T) {
	p := newTestPKI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if err := Serve(context.Background(), l, NewHandler(newFixture().options()), p.serving, nil); err == nil {
		t.Error("Serve without client CAs succeeded")
	}
}

func TestAPIServiceAndService(t *testing.T) {
	port := int32(10250)
	wantAPIService := &apiregistrationv1.APIService{
		TypeMeta:   metav1.TypeMeta{Kind: "APIService", APIVersion: "apiregistration.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: &port},
			Group:                "metrics.k8s.io",
			Version:              "v1beta1",
			CABundle:             []byte("CA"),
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
	if diff := cmp.Diff(wantAPIService, APIService(port, []byte("CA"))); diff != "" {
		t.Errorf("APIService (-want +got):\n%s", diff)
	}
	wantService := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-server", Namespace: "kube-system"},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
	if diff := cmp.Diff(wantService, Service(port)); diff != "" {
		t.Errorf("Service (-want +got):\n%s", diff)
	}
	if ServingDNSName != "metrics-server.kube-system.svc" {
		t.Errorf("ServingDNSName = %q", ServingDNSName)
	}
}
