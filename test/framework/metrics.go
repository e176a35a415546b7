package framework

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Metrics is one scrape of a Prometheus text endpoint.
type Metrics string

// ScrapeMetrics reads http://addr/metrics (a controller-manager's metrics
// endpoint on loopback).
func ScrapeMetrics(t testing.TB, addr string) Metrics {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // loopback, test-bounded
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	return Metrics(body)
}

// ScrapeAPIServerMetrics reads an API server's /metrics through cfg.
func ScrapeAPIServerMetrics(t testing.TB, cfg *rest.Config) Metrics {
	t.Helper()
	raw, err := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(Context(t, time.Minute))
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	return Metrics(raw)
}

// Watches is the number of watches of resource an API server is serving.
func Watches(t testing.TB, cfg *rest.Config, resource string) float64 {
	t.Helper()
	return ScrapeAPIServerMetrics(t, cfg).Sum("apiserver_longrunning_requests", `resource="`+resource+`"`, `verb="WATCH"`)
}

// Sum adds the samples of metric name that carry every given label, each
// written `key="value"`; with none, every sample of name.
func (m Metrics) Sum(name string, labels ...string) float64 {
	sum := 0.0
	for line := range strings.SplitSeq(string(m), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest == "" || (rest[0] != '{' && rest[0] != ' ')) {
			continue // another metric whose name starts with name
		}
		space := strings.LastIndexByte(rest, ' ')
		if space < 0 {
			continue
		}
		set := rest[:space]
		if !containsAll(set, labels) {
			continue
		}
		if v, err := strconv.ParseFloat(rest[space+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// Value is the value of one sample, written as the endpoint writes it
// (`name{a="x",b="y"}`); 0 when the endpoint has no such sample.
func (m Metrics) Value(sample string) (float64, error) {
	for line := range strings.SplitSeq(string(m), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, nil
}

// Has reports whether a sample line starts with prefix, such as
// `workqueue_depth{controller="detector"`.
func (m Metrics) Has(prefix string) bool {
	for line := range strings.SplitSeq(string(m), "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// containsAll reports whether the label set `{a="x",b="y"}` has every
// `k="v"` of labels.
func containsAll(set string, labels []string) bool {
	set = "," + strings.Trim(set, "{}") + ","
	for _, l := range labels {
		if !strings.Contains(set, ","+l+",") {
			return false
		}
	}
	return true
}
