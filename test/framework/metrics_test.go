package framework

import "testing"

func TestMetricsSum(t *testing.T) {
	m := Metrics(`# HELP atoll_events_total Events.
atoll_events_total{result="suppressed"} 7
atoll_events_total{result="written"} 2
atoll_events_total_extra{result="suppressed"} 100
atoll_controller_requests_total{code="2xx",controller="executor",verb="get"} 1
atoll_controller_requests_total{code="4xx",controller="executor",verb="get"} 2
atoll_controller_requests_total{code="2xx",controller="executor",verb="list"} 6
atoll_controller_requests_total{code="2xx",controller="executor-x",verb="get"} 50
up 1
`)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"atoll_events_total", []string{`result="suppressed"`}, 7},
		{"atoll_events_total", nil, 9},
		{"atoll_controller_requests_total", []string{`controller="executor"`, `verb="get"`}, 3},
		{"atoll_controller_requests_total", []string{`verb="list"`}, 6},
		{"up", nil, 1},
	} {
		if got := m.Sum(tc.name, tc.labels...); got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if v, err := m.Value(`atoll_events_total{result="written"}`); v != 2 || err != nil {
		t.Errorf("Value = %v, %v; want 2", v, err)
	}
	if v, err := m.Value(`atoll_events_total{result="dropped"}`); v != 0 || err != nil {
		t.Errorf("Value of an absent sample = %v, %v; want 0", v, err)
	}
	if !m.Has(`atoll_controller_requests_total{code="2xx",controller="executor",verb="list"}`) || m.Has("workqueue_depth{") {
		t.Error("Has")
	}
}
