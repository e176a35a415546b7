// Package requestmetrics counts the requests each controller sends to the
// control-plane API server, by verb (atoll_controller_requests_total), so
// that the cost of a controller is visible without a profile: every
// controller gets a client of its own whose transport counts.
package requestmetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "atoll_controller_requests_total",
	Help: "Requests a controller sent to the control-plane API server, by verb (get, list, watch, create, update, patch, delete) and response code class.",
}, []string{"controller", "verb", "code"})

func init() { metrics.Registry.MustRegister(requests) }

// Config returns a copy of cfg whose requests count as controller's.
func Config(cfg *rest.Config, controller string) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &counting{next: rt, controller: controller}
	})
	return out
}

type counting struct {
	next       http.RoundTripper
	controller string
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	code := "error"
	if err == nil {
		code = codeClass(resp.StatusCode)
	}
	requests.WithLabelValues(c.controller, Verb(req), code).Inc()
	return resp, err
}

// Verb is the Kubernetes verb of an API request, from its method and URL:
// a GET is a watch with watch=true, a list when the path ends at a
// collection, a get otherwise.
func Verb(req *http.Request) string {
	switch req.Method {
	case http.MethodGet:
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		if isCollection(req.URL.Path) {
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if isCollection(req.URL.Path) {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(req.Method)
}

// isCollection reports whether an API path names a collection:
// /api/v1/RESOURCE, /api/v1/namespaces/NS/RESOURCE, /apis/G/V/RESOURCE,
// /apis/G/V/namespaces/NS/RESOURCE. /api/v1/namespaces is the first form
// (the namespaces collection); /api/v1/namespaces/NS is one object.
func isCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return false
	}
	if len(rest) >= 2 && rest[0] == "namespaces" {
		if len(rest) == 2 {
			return false // one namespace
		}
		rest = rest[2:]
	}
	return len(rest) == 1
}

func codeClass(code int) string {
	switch {
	case code < 300:
		return "2xx"
	case code < 400:
		return "3xx"
	case code < 500:
		return "4xx"
	}
	return "5xx"
}
