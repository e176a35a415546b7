package controlplane

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"

	baselineadmission "github.com/atoll-dev/atoll/pkg/admission/baseline"
	"github.com/atoll-dev/atoll/pkg/admission/discovery"
	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
)

// APIServerConfig is what an embedded kube-apiserver needs. It is shared by
// the federation control plane and the simulated member clusters.
type APIServerConfig struct {
	// Listener is the secure port, already bound (so no other process can
	// take the port between choosing and serving it).
	Listener net.Listener
	// EtcdServers are https URLs; the API server verifies them against
	// PKI's etcd CA and authenticates with PKI's etcd client certificate.
	EtcdServers []string
	// PKI holds the certificates and the encryption configuration
	// (ensurePKI creates them).
	PKI pki.Files
	// ServiceCIDR is the service cluster IP range.
	ServiceCIDR string
	// TokenAuthFile, when set, is a static token file (pki.WriteTokenFile)
	// the API server reads once, at start.
	TokenAuthFile string
	// ExtraArgs are appended to atoll's flags and win over them.
	ExtraArgs []string
	// AdmissionDiscovery, when set, is handed the REST mapper of the
	// admission plugins, to refresh it once atoll's CRDs are served.
	AdmissionDiscovery *discovery.Refresher
}

// DefaultServiceCIDR is the service range of an embedded API server; the
// first address becomes the "kubernetes" Service IP.
const DefaultServiceCIDR = "10.96.0.0/16"

func (c APIServerConfig) args() []string {
	cidr := c.ServiceCIDR
	if cidr == "" {
		cidr = DefaultServiceCIDR
	}
	args := []string{
		"--etcd-servers=" + strings.Join(c.EtcdServers, ","),
		"--etcd-cafile=" + c.PKI.EtcdCA().CACert(),
		"--etcd-certfile=" + c.PKI.EtcdClientCert(),
		"--etcd-keyfile=" + c.PKI.EtcdClientKey(),
		// Secrets are encrypted at rest (pki.EnsureEncryptionConfig).
		"--encryption-provider-config=" + c.PKI.EncryptionConfig(),
		"--tls-cert-file=" + c.PKI.ServingCert(),
		"--tls-private-key-file=" + c.PKI.ServingKey(),
		"--client-ca-file=" + c.PKI.CACert(),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.PKI.ServiceAccountPub(),
		"--service-account-signing-key-file=" + c.PKI.ServiceAccountKey(),
		"--service-cluster-ip-range=" + cidr,
		"--advertise-address=127.0.0.1",
		// The lease endpoint reconciler publishes the advertise address in the
		// "kubernetes" Endpoints; nothing consumes it in an embedded server,
		// and it refuses loopback addresses.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	if c.TokenAuthFile != "" {
		args = append(args, "--token-auth-file="+c.TokenAuthFile)
	}
	return append(args, c.ExtraArgs...)
}

// RunAPIServer starts a kube-apiserver in this process and returns a channel
// that receives its exit error (nil after a clean stop) once ctx is cancelled
// or it fails. It does not wait for readiness; use WaitReady.
func RunAPIServer(ctx context.Context, cfg APIServerConfig) (<-chan error, error) {
	s := options.NewServerRunOptions()
	// atoll's own admission checks that CEL rules cannot express.
	baselineadmission.Register(s.Admission.GenericAdmission.Plugins)
	s.Admission.GenericAdmission.RecommendedPluginOrder = append(s.Admission.GenericAdmission.RecommendedPluginOrder, baselineadmission.PluginName)
	if cfg.AdmissionDiscovery != nil {
		cfg.AdmissionDiscovery.Register(s.Admission.GenericAdmission.Plugins)
		s.Admission.GenericAdmission.RecommendedPluginOrder = append(s.Admission.GenericAdmission.RecommendedPluginOrder, discovery.PluginName)
	}
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(cfg.args()); err != nil {
		return nil, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	s.SecureServing.Listener = cfg.Listener
	s.SecureServing.BindPort = cfg.Listener.Addr().(*net.TCPAddr).Port

	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-apiserver feature gates: %w", err)
	}
	// The API server's own loopback client must not print warnings it sent
	// to itself.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, fmt.Errorf("completing kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, fmt.Errorf("kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, completed)
	}()
	return done, nil
}
