package pki

import (
	"bytes"
	"crypto/x509"
	"net"
	"os"
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
