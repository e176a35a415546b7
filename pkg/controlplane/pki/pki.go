// Package pki creates and reuses the certificates and keys of an embedded
// control plane: a cluster CA, the API server's serving certificate, client
// certificates, the service-account signing key, etcd's own CA and
// certificates, and the key that encrypts Secrets at rest. Everything is generated
// once into a directory and loaded from there on later starts, so kubeconfigs
// and service-account tokens stay valid across restarts.
package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	// renewBefore is how close to expiry a leaf certificate is regenerated.
	renewBefore = 30 * 24 * time.Hour
)

// Files names the files of a PKI directory.
type Files struct {
	Dir string
}

func (f Files) CACert() string            { return filepath.Join(f.Dir, "ca.crt") }
func (f Files) CAKey() string             { return filepath.Join(f.Dir, "ca.key") }
func (f Files) ServingCert() string       { return filepath.Join(f.Dir, "apiserver.crt") }
func (f Files) ServingKey() string        { return filepath.Join(f.Dir, "apiserver.key") }
func (f Files) ServiceAccountKey() string { return filepath.Join(f.Dir, "service-account.key") }
func (f Files) ServiceAccountPub() string { return filepath.Join(f.Dir, "service-account.pub") }
func (f Files) EncryptionConfig() string  { return filepath.Join(f.Dir, "encryption-config.yaml") }

// EtcdCA is where etcd's own CA lives (DIR/etcd/ca.crt and ca.key, the
// layout kubeadm uses). It is separate from the cluster CA so that a client
// certificate issued for the API server (a user's, an admin's) never opens
// etcd, where RBAC does not apply.
func (f Files) EtcdCA() Files { return Files{Dir: filepath.Join(f.Dir, "etcd")} }

// EtcdServerCert is etcd's serving certificate, used on its client and its
// peer URL.
func (f Files) EtcdServerCert() string { return filepath.Join(f.Dir, "etcd", "server.crt") }
func (f Files) EtcdServerKey() string  { return filepath.Join(f.Dir, "etcd", "server.key") }

// EtcdClientCert is the client certificate kube-apiserver presents to etcd.
func (f Files) EtcdClientCert() string { return filepath.Join(f.Dir, "apiserver-etcd-client.crt") }
func (f Files) EtcdClientKey() string  { return filepath.Join(f.Dir, "apiserver-etcd-client.key") }

func (f Files) ClientCert(name string) string {
	return filepath.Join(f.Dir, "client-"+name+".crt")
}
func (f Files) ClientKey(name string) string {
	return filepath.Join(f.Dir, "client-"+name+".key")
}

// CA is a loaded certificate authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
}

// LoadOrCreateCA loads the CA from f, creating it when absent.
func LoadOrCreateCA(f Files, commonName string, now time.Time) (*CA, error) {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pki dir %s: %w", f.Dir, err)
	}
	certPEM, key, err := loadPair(f.CACert(), f.CAKey())
	if err == nil {
		cert, err := parseCert(certPEM)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", f.CACert(), err)
		}
		return &CA{Cert: cert, CertPEM: certPEM, Key: key}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writePair(f.CACert(), f.CAKey(), certPEM, key); err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, CertPEM: certPEM, Key: key}, nil
}

// LeafSpec describes a certificate signed by the CA.
type LeafSpec struct {
	CommonName   string
	Organization []string
	IPs          []net.IP
	DNSNames     []string
	Client       bool // client auth usage; otherwise server auth
	// ServerAndClient gives a serving certificate client auth usage too,
	// for servers that dial with it (etcd's gRPC gateway dials its own
	// client URL with the serving certificate).
	ServerAndClient bool
}

func (s LeafSpec) usages() []x509.ExtKeyUsage {
	switch {
	case s.Client:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case s.ServerAndClient:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	default:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
}

// EnsureLeaf loads the certificate at certPath/keyPath and keeps it when it
// was signed by ca, covers spec's names and is not about to expire; otherwise
// it issues a new one. It returns the PEM of certificate and key.
func EnsureLeaf(ca *CA, certPath, keyPath string, spec LeafSpec, now time.Time) (certPEM, keyPEM []byte, err error) {
	if certPEM, key, err := loadPair(certPath, keyPath); err == nil {
		if cert, err := parseCert(certPEM); err == nil && leafStillGood(ca, cert, spec, now) {
			keyPEM, err := encodeKey(key)
			return certPEM, keyPEM, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating key for %s: %w", spec.CommonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  spec.usages(),
		IPAddresses:  spec.IPs,
		DNSNames:     spec.DNSNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing certificate for %s: %w", spec.CommonName, err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writePair(certPath, keyPath, certPEM, key); err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	return certPEM, keyPEM, err
}

func leafStillGood(ca *CA, cert *x509.Certificate, spec LeafSpec, now time.Time) bool {
	if cert.CheckSignatureFrom(ca.Cert) != nil || now.Add(renewBefore).After(cert.NotAfter) {
		return false
	}
	if cert.Subject.CommonName != spec.CommonName || !slices.Equal(cert.Subject.Organization, spec.Organization) {
		return false
	}
	for _, usage := range spec.usages() {
		if !slices.Contains(cert.ExtKeyUsage, usage) {
			return false
		}
	}
	for _, ip := range spec.IPs {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	for _, name := range spec.DNSNames {
		if !slices.Contains(cert.DNSNames, name) {
			return false
		}
	}
	return true
}

// EnsureServiceAccountKey creates the RSA key that signs service-account
// tokens, once, and writes its public half next to it.
func EnsureServiceAccountKey(f Files) error {
	if _, err := os.Stat(f.ServiceAccountKey()); err == nil {
		if _, err := os.Stat(f.ServiceAccountPub()); err == nil {
			return nil
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encoding service-account public key: %w", err)
	}
	if err := writePair(f.ServiceAccountPub(), f.ServiceAccountKey(),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), key); err != nil {
		return err
	}
	return nil
}

func newSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("reading random serial: %v", err))
	}
	return n
}

func parseCert(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no CERTIFICATE block")
	}
	return x509.ParseCertificate(block.Bytes)
}

func loadPair(certPath, keyPath string) ([]byte, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, nil, fmt.Errorf("%s: no PEM block", keyPath)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing %s: %w", keyPath, err)
	}
	signer, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a signing key", keyPath)
	}
	return certPEM, signer, nil
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writePair writes the public part first and the key last, each atomically,
// so a crash never leaves a key without its certificate being regenerated.
func writePair(pubPath, keyPath string, pubPEM []byte, key crypto.Signer) error {
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(pubPath, pubPEM, 0o644); err != nil {
		return err
	}
	return WriteFileAtomic(keyPath, keyPEM, 0o600)
}

// WriteFileAtomic writes data to path through a temporary file and a rename,
// skipping the write when the file already holds exactly data.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// EtcdClientName is the common name of the client certificate
// kube-apiserver presents to etcd (kubeadm's name for it).
const EtcdClientName = "kube-apiserver-etcd-client"

// EnsureEtcd creates (once) etcd's CA, its serving certificate for loopback
// and the API server's etcd client certificate, reusing what exists. etcd
// trusts only its own CA (see EtcdCA).
func EnsureEtcd(f Files, now time.Time) error {
	ca, err := LoadOrCreateCA(f.EtcdCA(), "atoll-etcd-ca", now)
	if err != nil {
		return err
	}
	server := LeafSpec{
		CommonName:      "atoll-etcd",
		IPs:             []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:        []string{"localhost"},
		ServerAndClient: true,
	}
	if _, _, err := EnsureLeaf(ca, f.EtcdServerCert(), f.EtcdServerKey(), server, now); err != nil {
		return err
	}
	client := LeafSpec{CommonName: EtcdClientName, Client: true}
	if _, _, err := EnsureLeaf(ca, f.EtcdClientCert(), f.EtcdClientKey(), client, now); err != nil {
		return err
	}
	return nil
}
