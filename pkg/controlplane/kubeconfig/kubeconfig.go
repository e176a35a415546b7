// Package kubeconfig writes self-contained kubeconfig files for the
// embedded API servers atoll runs.
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
)

// Spec describes one kubeconfig with a single cluster, user and context.
type Spec struct {
	Context    string // also the cluster name
	User       string
	Server     string // https://host:port
	CAPEM      []byte
	ClientCert []byte
	ClientKey  []byte
}

// Build returns the kubeconfig for spec. TLS is always verified against
// the CA: there is no insecure-skip-tls-verify.
func Build(spec Spec) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[spec.Context] = &clientcmdapi.Cluster{
		Server:                   spec.Server,
		CertificateAuthorityData: spec.CAPEM,
	}
	cfg.AuthInfos[spec.User] = &clientcmdapi.AuthInfo{
		ClientCertificateData: spec.ClientCert,
		ClientKeyData:         spec.ClientKey,
	}
	cfg.Contexts[spec.Context] = &clientcmdapi.Context{Cluster: spec.Context, AuthInfo: spec.User}
	cfg.CurrentContext = spec.Context
	return cfg
}

// Write writes the kubeconfig for spec to path (mode 0600), replacing it
// atomically and only when its content changed.
func Write(path string, spec Spec) error {
	data, err := clientcmd.Write(*Build(spec))
	if err != nil {
		return fmt.Errorf("encoding kubeconfig %s: %w", path, err)
	}
	return pki.WriteFileAtomic(path, data, 0o600)
}

// RESTConfig returns a client config for spec.
func RESTConfig(spec Spec) (*rest.Config, error) {
	return clientcmd.NewDefaultClientConfig(*Build(spec), nil).ClientConfig()
}
