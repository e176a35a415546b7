package clustercache

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

func makeCluster(name string, mutate ...func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://10.0.0.1:6443",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func makeSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func issuedFor(s *corev1.Secret, endpoint string) *corev1.Secret {
	s.Annotations = map[string]string{clusterv1alpha1.CredentialEndpointAnnotation: endpoint}
	return s
}

func TestConfigFor(t *testing.T) {
	full := map[string]string{"token": "tok", "caBundle": "CA"}
	type want struct {
		host, token, ca string
		insecure        bool
		proxy           string
		uncompressed    bool
	}
	cases := map[string]struct {
		cluster *clusterv1alpha1.Cluster
		secret  *corev1.Secret
		want    want
		wantErr string
	}{
		"token and CA": {
			cluster: makeCluster("m1"),
			secret:  makeSecret("m1", full),
			want:    want{host: "https://10.0.0.1:6443", token: "tok", ca: "CA"},
		},
		"insecure ignores the CA": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true }),
			secret:  makeSecret("m1", map[string]string{"token": "tok"}),
			want:    want{host: "https://10.0.0.1:6443", token: "tok", insecure: true},
		},
		"proxy": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "socks5://proxy:1080" }),
			secret:  makeSecret("m1", full),
			want:    want{host: "https://10.0.0.1:6443", token: "tok", ca: "CA", proxy: "socks5://proxy:1080"},
		},
		"a member on this host is read uncompressed": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://127.0.0.1:6443" }),
			secret:  makeSecret("m1", full),
			want:    want{host: "https://127.0.0.1:6443", token: "tok", ca: "CA", uncompressed: true},
		},
		"localhost too": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://localhost:6443" }),
			secret:  makeSecret("m1", full),
			want:    want{host: "https://localhost:6443", token: "tok", ca: "CA", uncompressed: true},
		},
		"IPv6 loopback too": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://[::1]:6443" }),
			secret:  makeSecret("m1", full),
			want:    want{host: "https://[::1]:6443", token: "tok", ca: "CA", uncompressed: true},
		},
		"loopback through a proxy is the proxy's": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) {
				c.Spec.APIEndpoint, c.Spec.ProxyURL = "https://127.0.0.1:6443", "http://proxy:3128"
			}),
			secret: makeSecret("m1", full),
			want:   want{host: "https://127.0.0.1:6443", token: "tok", ca: "CA", proxy: "http://proxy:3128"},
		},
		"no endpoint": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "" }),
			secret:  makeSecret("m1", full),
			wantErr: "cluster m1: spec.apiEndpoint is empty",
		},
		"no secretRef": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.SecretRef = nil }),
			wantErr: "cluster m1: spec.secretRef is not set",
		},
		"secret missing": {
			cluster: makeCluster("m1"),
			wantErr: "cluster m1: secret karmada-cluster/m1 (spec.secretRef) not found",
		},
		"no token": {
			cluster: makeCluster("m1"),
			secret:  makeSecret("m1", map[string]string{"caBundle": "CA"}),
			wantErr: `cluster m1: secret karmada-cluster/m1 has no "token" key`,
		},
		"no CA": {
			cluster: makeCluster("m1"),
			secret:  makeSecret("m1", map[string]string{"token": "tok"}),
			wantErr: `cluster m1: secret karmada-cluster/m1 has no "caBundle" key`,
		},
		"credentials issued for this endpoint": {
			cluster: makeCluster("m1"),
			secret:  issuedFor(makeSecret("m1", full), "https://10.0.0.1:6443"),
			want:    want{host: "https://10.0.0.1:6443", token: "tok", ca: "CA"},
		},
		"credentials issued for another endpoint": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://evil.example:6443" }),
			secret:  issuedFor(makeSecret("m1", full), "https://10.0.0.1:6443"),
			wantErr: "cluster m1: spec.apiEndpoint https://evil.example:6443 is not the endpoint the credentials in secret karmada-cluster/m1 were issued for (https://10.0.0.1:6443)",
		},
		"bad proxy scheme": {
			cluster: makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "ftp://proxy" }),
			secret:  makeSecret("m1", full),
			wantErr: "scheme must be http, https or socks5",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := ConfigFor(tc.cluster, tc.secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{host: cfg.Host, token: cfg.BearerToken, ca: string(cfg.CAData), insecure: cfg.Insecure, uncompressed: cfg.DisableCompression}
			if cfg.Proxy != nil {
				u, err := cfg.Proxy(&http.Request{})
				if err != nil {
					t.Fatal(err)
				}
				got.proxy = u.String()
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMemberRebuild: a member is reused while nothing it depends on
// changed, and rebuilt (the old one closed) when the Cluster's connection
// settings or the Secret change; a deleted Cluster is removed.
func TestMemberRebuild(t *testing.T) {
	ctx := context.Background()
	c, cc := startCache(t)

	m1, err := cc.Member(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m1.Config.QPS != 100 || m1.Config.Burst != 200 || m1.Config.Timeout.Seconds() != 10 {
		t.Errorf("defaults: QPS %v Burst %d Timeout %v", m1.Config.QPS, m1.Config.Burst, m1.Config.Timeout)
	}
	if _, err := m1.Watch(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, nil); err != nil {
		t.Fatal(err)
	}
	again, err := cc.Member(ctx, "m1")
	if err != nil || again != m1 {
		t.Fatalf("unchanged cluster: got a new member (%v)", err)
	}

	// Labels are not connection settings.
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, key("m1"), cl); err != nil {
		t.Fatal(err)
	}
	cl.Labels = map[string]string{"a": "b"}
	if err := c.Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if again, _ := cc.Member(ctx, "m1"); again != m1 {
		t.Fatal("a label change rebuilt the member")
	}

	rotateToken(t, c)
	m2, err := cc.Member(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m2 == m1 || !m1.Closed() || m2.Config.BearerToken != "rotated" {
		t.Fatalf("secret change: new=%t old closed=%t token=%q", m2 != m1, m1.Closed(), m2.Config.BearerToken)
	}
	if _, err := m1.Watch(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, nil); err == nil {
		t.Error("Watch on a closed member succeeded")
	}

	cl.Spec.APIEndpoint = "https://10.0.0.2:6443"
	if err := c.Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	m3, err := cc.Member(ctx, "m1")
	if err != nil || m3 == m2 || !m2.Closed() || m3.Config.Host != "https://10.0.0.2:6443" {
		t.Fatalf("endpoint change: err=%v new=%t old closed=%t", err, m3 != m2, m2.Closed())
	}

	if err := c.Delete(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Member(ctx, "m1"); err == nil {
		t.Fatal("deleted cluster: no error")
	}
	if !m3.Closed() {
		t.Error("deleted cluster: member not closed")
	}
}

// startCache runs a Cache over a fake client holding cluster m1 (insecure)
// and its Secret, until the test ends.
func startCache(t *testing.T) (client.Client, *Cache) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).
		WithObjects(makeCluster("m1", func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true }),
			makeSecret("m1", map[string]string{"token": "tok"})).Build()
	cc := New(c, Options{})
	stop, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = cc.Start(stop); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, cc
}

// rotateToken sets m1's token to "rotated".
func rotateToken(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	secret := &corev1.Secret{}
	if err := c.Get(ctx, keyNS("karmada-cluster", "m1"), secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["token"] = []byte("rotated")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
}

func key(name string) types.NamespacedName { return types.NamespacedName{Name: name} }

func keyNS(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// TestMemberTracksChanges: once changes are tracked, Member reads the
// Cluster and Secret again only after a change was reported, and then
// rebuilds the member as before.
func TestMemberTracksChanges(t *testing.T) {
	ctx := context.Background()
	c, cc := startCache(t)
	cc.tracking.Store(true) // as TrackChanges leaves it

	m1, err := cc.Member(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	rotateToken(t, c)
	if again, err := cc.Member(ctx, "m1"); err != nil || again != m1 {
		t.Fatalf("no change reported yet: got a new member (%v)", err)
	}
	cc.Changed()
	m2, err := cc.Member(ctx, "m1")
	if err != nil || m2 == m1 || !m1.Closed() || m2.Config.BearerToken != "rotated" {
		t.Fatalf("after the change: err=%v new=%t old closed=%t token=%q", err, m2 != m1, m1.Closed(), m2.Config.BearerToken)
	}
	if again, _ := cc.Member(ctx, "m1"); again != m2 {
		t.Fatal("rebuilt member not reused")
	}

	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, key("m1"), cl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cl); err != nil {
		t.Fatal(err)
	}
	cc.Changed()
	if _, err := cc.Member(ctx, "m1"); err == nil || !m2.Closed() {
		t.Fatalf("deleted cluster: err=%v, member closed=%t", err, m2.Closed())
	}
}
