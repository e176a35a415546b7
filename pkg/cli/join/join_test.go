package join

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
)

func TestClusterObject(t *testing.T) {
	proxy, _ := url.Parse("socks5://proxy:1080")
	cases := map[string]struct {
		join   cmds.Join
		member rest.Config
		id     string
		want   map[string]any
	}{
		"all flags": {
			join:   cmds.Join{Name: "m1", Region: "cn-east", Zone: "cn-east-1a", Provider: "sim", Labels: map[string]string{"env": "prod"}},
			member: rest.Config{Host: "https://10.0.0.1:6443"},
			id:     "uid-1",
			want: map[string]any{
				"apiVersion": "cluster.karmada.io/v1alpha1",
				"kind":       "Cluster",
				"metadata":   map[string]any{"name": "m1", "labels": map[string]any{"env": "prod"}},
				"spec": map[string]any{
					"syncMode":    "Push",
					"apiEndpoint": "https://10.0.0.1:6443",
					"secretRef":   map[string]any{"namespace": "karmada-cluster", "name": "m1"},
					"id":          "uid-1",
					"region":      "cn-east",
					"zones":       []any{"cn-east-1a"},
					"provider":    "sim",
				},
			},
		},
		"insecure kubeconfig with a proxy, no flags": {
			join: cmds.Join{Name: "m2"},
			member: rest.Config{Host: "https://m2:6443", Proxy: http.ProxyURL(proxy),
				TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
			want: map[string]any{
				"apiVersion": "cluster.karmada.io/v1alpha1",
				"kind":       "Cluster",
				"metadata":   map[string]any{"name": "m2"},
				"spec": map[string]any{
					"syncMode":                    "Push",
					"apiEndpoint":                 "https://m2:6443",
					"secretRef":                   map[string]any{"namespace": "karmada-cluster", "name": "m2"},
					"insecureSkipTLSVerification": true,
					"proxyURL":                    "socks5://proxy:1080",
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := clusterObject(&tc.join, &tc.member, tc.id)
			if diff := cmp.Diff(tc.want, got.Object); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
		})
	}
}
