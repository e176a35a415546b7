package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/util/freeport"
)

// DefaultListen serves on loopback at a free port, remembered across
// restarts.
const DefaultListen = "127.0.0.1:0"

func splitListen(listen string) (string, int, error) {
	if listen == "" {
		listen = DefaultListen
	}
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("--listen %q: want host:port, e.g. 127.0.0.1:6443: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("--listen %q: port must be a number from 0 to 65535", listen)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if ip := net.ParseIP(host); ip == nil && host != "localhost" {
		return "", 0, fmt.Errorf("--listen %q: host must be an IP address or localhost", listen)
	}
	return host, port, nil
}

// clientHost is the address clients use to reach a server bound to host.
func clientHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return host
}

// listenAPIServer binds the API server's port. An explicit port must be
// free; otherwise the previous run's port is reused when free, else a new
// one that freeport picks, so that it stays free across restarts.
func listenAPIServer(host string, ports *portState, explicit bool) (net.Listener, error) {
	if explicit {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(ports.APIServer)))
		if err != nil {
			return nil, fmt.Errorf("--listen %s: %w", net.JoinHostPort(host, strconv.Itoa(ports.APIServer)), err)
		}
		return l, nil
	}
	l, err := freeport.Listen(host, ports.APIServer)
	if err != nil {
		return nil, fmt.Errorf("binding the API server on %s: %w", host, err)
	}
	ports.APIServer = l.Addr().(*net.TCPAddr).Port
	return l, nil
}

type credentials struct {
	ca        *pki.CA
	caPEM     []byte
	adminCert []byte
	adminKey  []byte
}

// ensurePKI creates (once) the CA, the API server's serving certificate, the
// admin client certificate, the service-account key, etcd's CA and
// certificates and the key that encrypts Secrets at rest, reusing what
// exists. A data dir from before etcd TLS and encryption gets the missing
// files on its next start.
func ensurePKI(files pki.Files, host string) (*credentials, error) {
	now := time.Now()
	ca, err := pki.LoadOrCreateCA(files, "atoll-ca", now)
	if err != nil {
		return nil, err
	}
	serving := pki.LeafSpec{
		CommonName: "kube-apiserver",
		IPs:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		serving.IPs = append(serving.IPs, ip)
	}
	if _, _, err := pki.EnsureLeaf(ca, files.ServingCert(), files.ServingKey(), serving, now); err != nil {
		return nil, err
	}
	// system:masters is the bootstrap superuser group RBAC always honours.
	admin := pki.LeafSpec{CommonName: adminUser, Organization: []string{"system:masters"}, Client: true}
	cert, key, err := pki.EnsureLeaf(ca, files.ClientCert(adminUser), files.ClientKey(adminUser), admin, now)
	if err != nil {
		return nil, err
	}
	if err := pki.EnsureServiceAccountKey(files); err != nil {
		return nil, err
	}
	if err := pki.EnsureEtcd(files, now); err != nil {
		return nil, err
	}
	if _, err := pki.EnsureEncryptionConfig(files); err != nil {
		return nil, err
	}
	return &credentials{ca: ca, caPEM: ca.CertPEM, adminCert: cert, adminKey: key}, nil
}

// clientUserToken gives user a bearer token of its own for this start,
// in a token file the API server reads once (Start removes it then), and
// returns the token and the file; nothing without a user. A token, not a
// client certificate: kube-apiserver verifies a certificate's chain on
// every request (3.6 % of the control plane's CPU in a burst, design 0013
// decision 48) and a token once per cache period. The certificate earlier
// versions issued the user is removed, so no unused credential stays in
// the data dir. apiServerArgs are the API server's other flags.
func clientUserToken(files pki.Files, user string, apiServerArgs []string) (token, path string, err error) {
	if user == adminUser {
		return "", "", fmt.Errorf("client user %s is the admin's; the controllers get a user of their own", user)
	}
	stale := []string{files.TokenFile()} // a start that died before removing it
	if user != "" {
		if err := noTokenFileArg(apiServerArgs); err != nil {
			return "", "", err
		}
		stale = append(stale, files.ClientCert(user), files.ClientKey(user))
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("removing %s, which atoll no longer uses: %w", p, err)
		}
	}
	if user == "" {
		return "", "", nil
	}
	if token, err = pki.NewToken(); err != nil {
		return "", "", err
	}
	if err := pki.WriteTokenFile(files.TokenFile(), user, token); err != nil {
		return "", "", err
	}
	return token, files.TokenFile(), nil
}

// noTokenFileArg refuses a second --token-auth-file among the API
// server's extra flags: the last would win, and the controllers' token
// would not authenticate.
func noTokenFileArg(args []string) error {
	for _, a := range args {
		if a == "--token-auth-file" || strings.HasPrefix(a, "--token-auth-file=") {
			return fmt.Errorf("kube-apiserver flag %s: the embedded controllers authenticate with the API server's token file, which atoll writes; "+
				"give other users client certificates or service-account tokens", a)
		}
	}
	return nil
}

// WaitReady polls the API server's /readyz until it answers ok, ctx ends,
// or the server exits (exited may be nil).
func WaitReady(ctx context.Context, cfg *rest.Config, exited <-chan error) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building client for %s: %w", cfg.Host, err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		lastErr = err
		select {
		case err := <-exited:
			return fmt.Errorf("kube-apiserver exited before it was ready: %v", err) //nolint:errorlint // err may be nil (a clean exit); %w would print %!w(<nil>)
		case <-ctx.Done():
			return fmt.Errorf("API server %s not ready: %w (last error: %v)", cfg.Host, ctx.Err(), lastErr) //nolint:errorlint // lastErr is nil when /readyz answered other than ok
		case <-tick.C:
		}
	}
}

// ResolveListen turns --listen into an explicit host:port for a process
// that serves the control plane of dataDir and may be restarted: an
// explicit port is kept; port 0 becomes the previous run's port
// (ports.json) when it is free, else a free port. A restarted control
// plane given the result serves on the same address or fails, so
// kubeconfigs stay valid.
func ResolveListen(dataDir, listen string) (string, error) {
	host, port, err := splitListen(listen)
	if err != nil {
		return "", err
	}
	if port != 0 {
		return net.JoinHostPort(host, strconv.Itoa(port)), nil
	}
	ports, err := loadPorts(filepath.Join(dataDir, portsFile))
	if err != nil {
		return "", err
	}
	l, err := listenAPIServer(host, ports, false)
	if err != nil {
		return "", err
	}
	_ = l.Close()
	return net.JoinHostPort(host, strconv.Itoa(ports.APIServer)), nil
}
