package cluster

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// clusterReady is atoll_cluster_ready{cluster}: 1 Ready, 0 not ready, -1
// unknown (unreachable).
var clusterReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "atoll_cluster_ready",
	Help: "Ready condition of a member cluster: 1 ready, 0 not ready, -1 unknown (unreachable).",
}, []string{"cluster"})

func init() {
	metrics.Registry.MustRegister(clusterReady)
}

func readyValue(s metav1.ConditionStatus) float64 {
	switch s {
	case metav1.ConditionTrue:
		return 1
	case metav1.ConditionFalse:
		return 0
	default:
		return -1
	}
}
