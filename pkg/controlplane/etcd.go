package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/util/freeport"
)

// etcdQuotaBytes raises etcd's backend quota from the 2 GiB default: a
// federation control plane with hundreds of thousands of templates and
// bindings outgrows 2 GiB before it outgrows one machine.
const etcdQuotaBytes = 8 << 30

// startEtcd runs an embedded etcd member on loopback with its data under
// dir. Its client and peer URLs serve TLS with files' etcd certificate and
// accept only clients with a certificate from etcd's own CA (EnsureEtcd),
// so a local user without read access to the data dir cannot reach it. It
// prefers the ports of the previous run (recorded in ports) so the member's
// stored peer URL keeps its port (a data dir from before TLS keeps an http
// peer URL in its membership record, which a single-member cluster never
// dials), and retries with fresh ports because a free port can be taken
// between probing and binding.
func startEtcd(ctx context.Context, dir, logDir string, files pki.Files, ports *portState) (*embed.Etcd, string, error) {
	tlsInfo := transport.TLSInfo{
		CertFile:       files.EtcdServerCert(),
		KeyFile:        files.EtcdServerKey(),
		TrustedCAFile:  files.EtcdCA().CACert(),
		ClientCertAuth: true,
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			ports.EtcdClient, ports.EtcdPeer = 0, 0
		}
		clientURL, err := loopbackURL(&ports.EtcdClient)
		if err != nil {
			return nil, "", err
		}
		peerURL, err := loopbackURL(&ports.EtcdPeer)
		if err != nil {
			return nil, "", err
		}
		cfg := embed.NewConfig()
		cfg.Name = "atoll"
		cfg.Dir = dir
		cfg.ListenClientUrls = []url.URL{*clientURL}
		cfg.AdvertiseClientUrls = []url.URL{*clientURL}
		cfg.ListenPeerUrls = []url.URL{*peerURL}
		cfg.AdvertisePeerUrls = []url.URL{*peerURL}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		cfg.ClientTLSInfo = tlsInfo
		cfg.PeerTLSInfo = tlsInfo
		cfg.QuotaBackendBytes = etcdQuotaBytes
		cfg.Logger = "zap"
		cfg.LogLevel = "warn"
		cfg.LogOutputs = []string{filepath.Join(logDir, "etcd.log")}

		e, err := embed.StartEtcd(cfg)
		if err != nil {
			lastErr = err
			continue
		}
		select {
		case <-e.Server.ReadyNotify():
			return e, clientURL.String(), nil
		case err := <-e.Err():
			e.Close()
			lastErr = err
		case <-time.After(60 * time.Second):
			e.Close()
			return nil, "", fmt.Errorf("etcd in %s did not become ready within 60s", dir)
		case <-ctx.Done():
			e.Close()
			return nil, "", ctx.Err()
		}
	}
	return nil, "", fmt.Errorf("starting etcd in %s: %w", dir, lastErr)
}

// loopbackURL returns an https URL on 127.0.0.1 at *port when that port is
// free, or at a new free port (from freeport), which it stores in *port.
func loopbackURL(port *int) (*url.URL, error) {
	l, err := freeport.Listen("127.0.0.1", *port)
	if err != nil {
		return nil, fmt.Errorf("finding a free loopback port: %w", err)
	}
	*port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))}, nil
}

func ensureDir(path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return nil
}
