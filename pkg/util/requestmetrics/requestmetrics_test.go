package requestmetrics

import (
	"net/http"
	"net/url"
	"testing"
)

func TestVerb(t *testing.T) {
	for _, tc := range []struct{ method, url, want string }{
		{"GET", "/apis/apps/v1/namespaces/demo/deployments/web", "get"},
		{"GET", "/apis/apps/v1/namespaces/demo/deployments", "list"},
		{"GET", "/apis/apps/v1/deployments?watch=true", "watch"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/namespaces/demo", "get"},
		{"GET", "/api/v1/nodes/n1", "get"},
		{"POST", "/apis/work.karmada.io/v1alpha2/namespaces/demo/resourcebindings", "create"},
		{"PATCH", "/apis/work.karmada.io/v1alpha2/namespaces/demo/resourcebindings/web/status", "patch"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/atoll-system/leases/x", "update"},
		{"DELETE", "/api/v1/namespaces/demo/configmaps/x", "delete"},
		{"DELETE", "/api/v1/namespaces/demo/configmaps", "deletecollection"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Verb(&http.Request{Method: tc.method, URL: u}); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.url, got, tc.want)
		}
	}
}
