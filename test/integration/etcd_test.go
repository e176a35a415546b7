package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/test/framework"
)

// secretboxPrefix starts every value kube-apiserver stored with atoll's
// encryption configuration.
const secretboxPrefix = "k8s:enc:secretbox:v1:" + pki.EncryptionKeyName + ":"

// TestEtcdIsLockedAndSecretsAreEncrypted checks the embedded etcd of the
// federation control plane and of a simulated member: it refuses plain
// HTTP, TLS without a client certificate and client certificates of the
// cluster CA; with the etcd client certificate from the data dir it serves
// Secrets only as secretbox ciphertext; and Secrets read fine through the
// API server, also after a restart on the same data dir.
func TestEtcdIsLockedAndSecretsAreEncrypted(t *testing.T) {
	cp := framework.StartControlPlane(t, framework.Options{Members: 1})
	ctx := framework.Context(t, 5*time.Minute)

	type target struct {
		name    string
		dataDir string
		config  func() *rest.Config
	}
	targets := []target{
		{name: "control plane", dataDir: cp.DataDir, config: func() *rest.Config { return cp.RESTConfig(t) }},
		{name: "member1", dataDir: simdir.MemberDir(cp.DataDir, "member1"), config: func() *rest.Config { return cp.MemberConfig(t, "member1") }},
	}
	token := "cluster-admin-token-" + rand.String(16)
	secretName, ns := "etcd-tls-"+rand.String(5), "default"
	keyConfig, err := os.ReadFile(pki.Files{Dir: filepath.Join(cp.DataDir, "pki")}.EncryptionConfig())
	if err != nil {
		t.Fatalf("no encryption configuration in the data dir: %v", err)
	}

	for _, tg := range targets {
		cs := kubernetes.NewForConfigOrDie(tg.config())
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
			Data: map[string][]byte{"token": []byte(token)}}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: creating Secret: %v", tg.name, err)
		}
		// A ConfigMap is not encrypted: it shows the raw check below would
		// see the plaintext if it were stored.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
			Data: map[string]string{"token": token}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: creating ConfigMap: %v", tg.name, err)
		}
	}

	check := func(t *testing.T, tg target) {
		port := etcdClientPort(t, tg.dataDir)
		files := pki.Files{Dir: filepath.Join(tg.dataDir, "pki")}
		endpoint := fmt.Sprintf("https://127.0.0.1:%d", port)

		// Plain HTTP, on the HTTP API and on etcd's gRPC API.
		if err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/health", port), nil); err == nil {
			t.Errorf("plain HTTP request to etcd succeeded")
		}
		if err := etcdList(ctx, fmt.Sprintf("http://127.0.0.1:%d", port), nil); err == nil {
			t.Errorf("etcd client without TLS read etcd")
		}

		etcdCA := x509.NewCertPool()
		caPEM, err := os.ReadFile(files.EtcdCA().CACert())
		if err != nil {
			t.Fatal(err)
		}
		etcdCA.AppendCertsFromPEM(caPEM)
		noCert := &tls.Config{RootCAs: etcdCA, MinVersion: tls.VersionTLS12}
		if err := httpGet(endpoint+"/health", noCert); err == nil {
			t.Errorf("TLS request without a client certificate succeeded")
		}
		if err := etcdList(ctx, endpoint, noCert); err == nil {
			t.Errorf("etcd client without a client certificate read etcd")
		}
		// The admin certificate of the kubeconfig is signed by the cluster
		// CA, which etcd does not trust.
		admin, err := tls.LoadX509KeyPair(files.ClientCert("atoll-admin"), files.ClientKey("atoll-admin"))
		if err != nil {
			t.Fatal(err)
		}
		clusterCert := &tls.Config{RootCAs: etcdCA, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}
		if err := etcdList(ctx, endpoint, clusterCert); err == nil {
			t.Errorf("etcd accepted a client certificate of the cluster CA")
		}

		client, err := tls.LoadX509KeyPair(files.EtcdClientCert(), files.EtcdClientKey())
		if err != nil {
			t.Fatal(err)
		}
		good := &tls.Config{RootCAs: etcdCA, Certificates: []tls.Certificate{client}, MinVersion: tls.VersionTLS12}
		if err := httpGet(endpoint+"/health", good); err != nil {
			t.Errorf("etcd /health with the etcd client certificate: %v", err)
		}
		// The same request as the refused ones above succeeds with the
		// right certificate, so they failed for want of it.
		if err := etcdList(ctx, endpoint, good); err != nil {
			t.Errorf("listing etcd keys with the etcd client certificate: %v", err)
		}
		raw, err := etcdGet(ctx, endpoint, good, "/registry/secrets/"+ns+"/"+secretName)
		if err != nil {
			t.Fatalf("reading the Secret from etcd with the etcd client certificate: %v", err)
		}
		if !bytes.HasPrefix(raw, []byte(secretboxPrefix)) {
			t.Errorf("stored Secret does not start with %q: %q", secretboxPrefix, raw[:min(len(raw), 64)])
		}
		if bytes.Contains(raw, []byte(token)) || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString([]byte(token)))) {
			t.Errorf("stored Secret contains its plaintext")
		}
		rawCM, err := etcdGet(ctx, endpoint, good, "/registry/configmaps/"+ns+"/"+secretName)
		if err != nil {
			t.Fatalf("reading the ConfigMap from etcd: %v", err)
		}
		if !bytes.Contains(rawCM, []byte(token)) {
			t.Errorf("stored ConfigMap does not contain its plaintext; the plaintext check proves nothing")
		}

		got, err := kubernetes.NewForConfigOrDie(tg.config()).CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the Secret through the API server: %v", err)
		}
		if string(got.Data["token"]) != token {
			t.Errorf("Secret data through the API server: %q, want %q", got.Data["token"], token)
		}
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) { check(t, tg) })
	}

	if err := cp.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	cp.Start(t)
	again, err := os.ReadFile(pki.Files{Dir: filepath.Join(cp.DataDir, "pki")}.EncryptionConfig())
	if err != nil || !bytes.Equal(again, keyConfig) {
		t.Fatalf("encryption configuration changed across restart (%v); Secrets would be unreadable", err)
	}
	// The member comes back under the supervisor after atoll up is ready.
	framework.Eventually(t, 2*time.Minute, "member1 serving again", func() (bool, string) {
		_, err := kubernetes.NewForConfigOrDie(cp.MemberConfig(t, "member1")).CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	for _, tg := range targets {
		t.Run(tg.name+" after restart", func(t *testing.T) { check(t, tg) })
	}
}

// etcdClientPort is the etcd client port a data dir's ports.json records.
func etcdClientPort(t *testing.T, dataDir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "ports.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ports struct {
		EtcdClient int `json:"etcdClient"`
	}
	if err := json.Unmarshal(data, &ports); err != nil || ports.EtcdClient == 0 {
		t.Fatalf("no etcd client port in %s (%v): %s", dataDir, err, data)
	}
	return ports.EtcdClient
}

// httpGet returns nil when url answers 200; tlsConfig nil means plain HTTP.
func httpGet(url string, tlsConfig *tls.Config) error {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// etcdGet reads the value at key with an etcd v3 client.
func etcdGet(ctx context.Context, endpoint string, tlsConfig *tls.Config, key string) ([]byte, error) {
	var value []byte
	err := withEtcd(ctx, endpoint, tlsConfig, func(ctx context.Context, c *clientv3.Client) error {
		resp, err := c.Get(ctx, key)
		if err != nil {
			return err
		}
		if len(resp.Kvs) == 0 {
			return fmt.Errorf("no key %s in etcd", key)
		}
		value = resp.Kvs[0].Value
		return nil
	})
	return value, err
}

// etcdList lists the keys of all Secrets (keys only); it returns nil when
// etcd answered, even with no keys; tlsConfig nil means no TLS.
func etcdList(ctx context.Context, endpoint string, tlsConfig *tls.Config) error {
	return withEtcd(ctx, endpoint, tlsConfig, func(ctx context.Context, c *clientv3.Client) error {
		_, err := c.Get(ctx, "/registry/secrets/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		return err
	})
}

func withEtcd(ctx context.Context, endpoint string, tlsConfig *tls.Config, f func(context.Context, *clientv3.Client) error) error {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		TLS:         tlsConfig,
		DialTimeout: 3 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return f(ctx, c)
}
