package scheduler

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metric names are a stable interface (dashboards, alerts).
func TestMetricsRegistered(t *testing.T) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"atoll_scheduler_attempts_total": false, "atoll_scheduler_latency_seconds": false}
	for _, f := range families {
		if _, ok := want[f.GetName()]; ok {
			want[f.GetName()] = true
		}
		if f.GetName() == "atoll_scheduler_attempts_total" && len(f.GetMetric()) != 3 {
			t.Errorf("attempts_total has %d series, want one per result (3)", len(f.GetMetric()))
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("metric %s is not registered", name)
		}
	}
}
