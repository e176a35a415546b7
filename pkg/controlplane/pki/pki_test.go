package pki

import (
	"bytes"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCAIsCreatedOnceAndReused(t *testing.T) {
	files := Files{Dir: t.TempDir()}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	first, err := LoadOrCreateCA(files, "atoll-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	second, err := LoadOrCreateCA(files, "atoll-ca", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.CertPEM, second.CertPEM) {
		t.Error("CA regenerated on second load")
	}
	if !second.Cert.IsCA {
		t.Error("CA certificate is not a CA")
	}
	if info, err := os.Stat(files.CAKey()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode: %v %v, want 0600", info.Mode().Perm(), err)
	}
}

func TestEnsureLeaf(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	serving := LeafSpec{CommonName: "kube-apiserver", IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	cases := map[string]struct {
		second      LeafSpec
		secondAt    time.Time
		wantReissue bool
	}{
		"same spec is reused":             {second: serving, secondAt: now.Add(time.Hour)},
		"new IP SAN reissues":             {second: LeafSpec{CommonName: "kube-apiserver", IPs: []net.IP{net.ParseIP("10.0.0.5")}}, secondAt: now, wantReissue: true},
		"new DNS SAN reissues":            {second: LeafSpec{CommonName: "kube-apiserver", DNSNames: []string{"atoll.example"}}, secondAt: now, wantReissue: true},
		"different organization reissues": {second: LeafSpec{CommonName: "kube-apiserver", Organization: []string{"x"}}, secondAt: now, wantReissue: true},
		"client usage added reissues":     {second: LeafSpec{CommonName: "kube-apiserver", ServerAndClient: true}, secondAt: now, wantReissue: true},
		"near expiry reissues":            {second: serving, secondAt: now.Add(leafValidity - renewBefore + time.Hour), wantReissue: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := Files{Dir: t.TempDir()}
			ca, err := LoadOrCreateCA(files, "atoll-ca", now)
			if err != nil {
				t.Fatal(err)
			}
			cert1, _, err := EnsureLeaf(ca, files.ServingCert(), files.ServingKey(), serving, now)
			if err != nil {
				t.Fatal(err)
			}
			cert2, key2, err := EnsureLeaf(ca, files.ServingCert(), files.ServingKey(), tc.second, tc.secondAt)
			if err != nil {
				t.Fatal(err)
			}
			if reissued := !bytes.Equal(cert1, cert2); reissued != tc.wantReissue {
				t.Errorf("reissued = %v, want %v", reissued, tc.wantReissue)
			}
			parsed, err := parseCert(cert2)
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AddCert(ca.Cert)
			if _, err := parsed.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: tc.secondAt,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("leaf does not verify against CA: %v", err)
			}
			if len(key2) == 0 {
				t.Error("no key returned")
			}
		})
	}
}

func TestServiceAccountKeyIsStable(t *testing.T) {
	files := Files{Dir: t.TempDir()}
	if err := os.MkdirAll(files.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := EnsureServiceAccountKey(files); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(files.ServiceAccountKey())
	if err := EnsureServiceAccountKey(files); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(files.ServiceAccountKey())
	if len(first) == 0 || !bytes.Equal(first, second) {
		t.Error("service-account key regenerated; existing tokens would become invalid")
	}
}

func TestEnsureEtcd(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	files := Files{Dir: filepath.Join(t.TempDir(), "pki")}
	clusterCA, err := LoadOrCreateCA(files, "atoll-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureEtcd(files, now); err != nil {
		t.Fatal(err)
	}
	paths := []string{files.EtcdCA().CACert(), files.EtcdCA().CAKey(), files.EtcdServerCert(), files.EtcdServerKey(),
		files.EtcdClientCert(), files.EtcdClientKey()}
	first := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first[p] = data
	}
	if err := EnsureEtcd(files, now.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if again, _ := os.ReadFile(p); !bytes.Equal(first[p], again) {
			t.Errorf("%s regenerated on the second call", p)
		}
	}
	for _, p := range []string{files.EtcdCA().CAKey(), files.EtcdServerKey(), files.EtcdClientKey()} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v (%v), want 0600", p, info.Mode().Perm(), err)
		}
	}
	for _, d := range []string{files.Dir, files.EtcdCA().Dir} {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v (%v), want 0700", d, info.Mode().Perm(), err)
		}
	}

	etcdCA, err := parseCert(first[files.EtcdCA().CACert()])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(etcdCA.Raw, clusterCA.Cert.Raw) {
		t.Fatal("etcd uses the cluster CA")
	}
	etcdRoots, clusterRoots := x509.NewCertPool(), x509.NewCertPool()
	etcdRoots.AddCert(etcdCA)
	clusterRoots.AddCert(clusterCA.Cert)
	server, err := parseCert(first[files.EtcdServerCert()])
	if err != nil {
		t.Fatal(err)
	}
	client, err := parseCert(first[files.EtcdClientCert()])
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		cert    *x509.Certificate
		roots   *x509.CertPool
		dns     string
		usage   x509.ExtKeyUsage
		wantErr bool
	}{
		"server serves 127.0.0.1":           {cert: server, roots: etcdRoots, dns: "127.0.0.1", usage: x509.ExtKeyUsageServerAuth},
		"server serves localhost":           {cert: server, roots: etcdRoots, dns: "localhost", usage: x509.ExtKeyUsageServerAuth},
		"server dials with its certificate": {cert: server, roots: etcdRoots, usage: x509.ExtKeyUsageClientAuth},
		"server does not serve other names": {cert: server, roots: etcdRoots, dns: "example.com", usage: x509.ExtKeyUsageServerAuth, wantErr: true},
		"apiserver client authenticates":    {cert: client, roots: etcdRoots, usage: x509.ExtKeyUsageClientAuth},
		"apiserver client cannot serve":     {cert: client, roots: etcdRoots, usage: x509.ExtKeyUsageServerAuth, wantErr: true},
		"cluster CA does not vouch for it":  {cert: client, roots: clusterRoots, usage: x509.ExtKeyUsageClientAuth, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := tc.cert.Verify(x509.VerifyOptions{Roots: tc.roots, DNSName: tc.dns, CurrentTime: now,
				KeyUsages: []x509.ExtKeyUsage{tc.usage}})
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Errorf("verify error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	if client.Subject.CommonName != EtcdClientName {
		t.Errorf("client CN %q, want %q", client.Subject.CommonName, EtcdClientName)
	}
}
