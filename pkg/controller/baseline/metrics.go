package baseline

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

// Metrics, registered with controller-runtime's registry.
var (
	timeToBaseline = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "atoll_baseline_time_to_ready_seconds",
		Help:    "Time from a cluster first matching a ClusterBaseline to every gating component being ready there, by baseline.",
		Buckets: prometheus.ExponentialBuckets(5, 2, 12), // 5s … ~2.8h
	}, []string{"baseline"})
	componentStates = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "atoll_baseline_components",
		Help: "Components of a ClusterBaseline over all its clusters, by state (Waiting, Applying, Ready, Failed, Withdrawing).",
	}, []string{"baseline", "state"})

	// readySeen remembers the clusters whose time to baseline was
	// observed, so a histogram sample is taken once per cluster.
	readySeen sync.Map // baseline/cluster → struct{}
)

var states = []appsv1alpha1.ComponentState{appsv1alpha1.ComponentWaiting, appsv1alpha1.ComponentApplying,
	appsv1alpha1.ComponentReady, appsv1alpha1.ComponentFailed, appsv1alpha1.ComponentWithdrawing}

func init() {
	metrics.Registry.MustRegister(timeToBaseline, componentStates)
}

// observeMetrics sets the state gauges and samples the time to baseline of
// clusters that just became ready.
func observeMetrics(cb *appsv1alpha1.ClusterBaseline, clusters []appsv1alpha1.BaselineClusterStatus) {
	counts := map[appsv1alpha1.ComponentState]int{}
	wasReady := map[string]bool{}
	for _, cs := range cb.Status.Clusters {
		wasReady[cs.Name] = cs.BaselineReadyTime != nil
	}
	for _, cs := range clusters {
		for _, c := range cs.Components {
			counts[c.State]++
		}
		if cs.BaselineReadyTime == nil || wasReady[cs.Name] || cs.MatchedTime == nil {
			continue
		}
		if _, seen := readySeen.LoadOrStore(cb.Name+"/"+cs.Name, struct{}{}); !seen {
			timeToBaseline.WithLabelValues(cb.Name).Observe(cs.BaselineReadyTime.Sub(cs.MatchedTime.Time).Seconds())
		}
	}
	for _, s := range states {
		componentStates.WithLabelValues(cb.Name, string(s)).Set(float64(counts[s]))
	}
}

// forgetMetrics drops a deleted baseline's series.
func forgetMetrics(name string) {
	for _, s := range states {
		componentStates.DeleteLabelValues(name, string(s))
	}
	timeToBaseline.DeleteLabelValues(name)
}
