// Package kubeconfig loads the kubeconfigs the CLI verbs are given.
package kubeconfig

import (
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load returns the client config of path (one file, or a $KUBECONFIG-style
// list) and context (empty: the current context).
func Load(path, context string) (*rest.Config, error) {
	cc := clientConfig(path, context)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// Namespace is the namespace of path's context ("default" when unset).
func Namespace(path, context string) (string, error) {
	ns, _, err := clientConfig(path, context).Namespace()
	return ns, err
}

func clientConfig(path, context string) clientcmd.ClientConfig {
	rules := &clientcmd.ClientConfigLoadingRules{}
	if list := filepath.SplitList(path); len(list) > 1 {
		rules.Precedence = list
	} else {
		rules.ExplicitPath = path
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: context, ClusterDefaults: clientcmdapi.Cluster{}})
}

// Client returns a client of the control plane that path reaches (current
// context), knowing the kinds the given AddToScheme functions register,
// with a 30s request timeout (a CLI verb must not hang on a dead server).
func Client(path string, addToScheme ...func(*runtime.Scheme) error) (client.Client, error) {
	cfg, err := Load(path, "")
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 30 * time.Second
	s := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("control plane at %s: %w", cfg.Host, err)
	}
	return c, nil
}
