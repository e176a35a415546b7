package clustercache

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// ConfigFor builds the client config of a push-mode cluster from its spec
// and the Secret its spec.secretRef names: the API endpoint, the bearer
// token under "token" and the CA bundle under "caBundle" (Karmada's keys),
// spec.insecureSkipTLSVerification and spec.proxyURL. Errors name the
// missing or invalid field.
func ConfigFor(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cluster == nil {
		return nil, errors.New("no cluster")
	}
	spec := &cluster.Spec
	if spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %s: spec.apiEndpoint is empty", cluster.Name)
	}
	endpoint, err := url.Parse(spec.APIEndpoint)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: spec.apiEndpoint %q: %w", cluster.Name, spec.APIEndpoint, err)
	}
	if spec.SecretRef == nil {
		return nil, fmt.Errorf("cluster %s: spec.secretRef is not set", cluster.Name)
	}
	ref := spec.SecretRef.Namespace + "/" + spec.SecretRef.Name
	if secret == nil {
		return nil, fmt.Errorf("cluster %s: secret %s (spec.secretRef) not found", cluster.Name, ref)
	}
	if issued, ok := secret.Annotations[clusterv1alpha1.CredentialEndpointAnnotation]; ok && issued != spec.APIEndpoint {
		// A changed apiEndpoint (or a secretRef borrowed from another
		// Cluster) must not send a member's cluster-admin token elsewhere.
		return nil, fmt.Errorf("cluster %s: spec.apiEndpoint %s is not the endpoint the credentials in secret %s were issued for (%s); "+
			"run atoll join again to move the cluster", cluster.Name, spec.APIEndpoint, ref, issued)
	}
	token := secret.Data[clusterv1alpha1.SecretTokenKey]
	if len(token) == 0 {
		return nil, fmt.Errorf("cluster %s: secret %s has no %q key", cluster.Name, ref, clusterv1alpha1.SecretTokenKey)
	}
	cfg := &rest.Config{Host: spec.APIEndpoint, BearerToken: string(token),
		// A member on this host (a simulated one) gets its lists and
		// initial watch streams uncompressed: gzip there is CPU on both
		// sides for bytes that never leave the machine. Members elsewhere
		// keep it, as their links may be slow.
		DisableCompression: spec.ProxyURL == "" && isLoopback(endpoint.Hostname()),
	}
	if spec.InsecureSkipTLSVerification {
		// client-go refuses a CA together with insecure; the CA is unused then.
		cfg.Insecure = true
	} else {
		ca := secret.Data[clusterv1alpha1.SecretCADataKey]
		if len(ca) == 0 {
			return nil, fmt.Errorf("cluster %s: secret %s has no %q key (set spec.insecureSkipTLSVerification to connect without verifying the server)",
				cluster.Name, ref, clusterv1alpha1.SecretCADataKey)
		}
		cfg.CAData = bytes.Clone(ca) // the config must not share the (cached) Secret's bytes
	}
	if spec.ProxyURL != "" {
		u, err := url.Parse(spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: spec.proxyURL %q: %w", cluster.Name, spec.ProxyURL, err)
		}
		switch u.Scheme {
		case "http", "https", "socks5":
		default:
			return nil, fmt.Errorf("cluster %s: spec.proxyURL %q: scheme must be http, https or socks5", cluster.Name, spec.ProxyURL)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return cfg, nil
}

// isLoopback reports whether host (a name or an IP address) is this
// machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
