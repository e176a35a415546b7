package baseline

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

// Matches reports whether the baseline selects a cluster with these labels
// (an empty or unset selector selects every cluster; one that does not
// parse selects none).
func Matches(cb *appsv1alpha1.ClusterBaseline, clusterLabels map[string]string) bool {
	if cb.Spec.ClusterSelector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(cb.Spec.ClusterSelector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(clusterLabels))
}

// Gates reports whether the baseline keeps business workloads off a cluster
// (the baseline.atoll.dev/not-ready taint): the baseline selects it, the
// cluster joined after the baseline was created (clusters that already run
// workloads when a baseline is added are not disturbed), and the
// baseline's gating components have never all been ready there. A joining
// cluster has a zero created time and counts as joining now.
func Gates(cb *appsv1alpha1.ClusterBaseline, cluster string, clusterLabels map[string]string, created time.Time) bool {
	if cb.DeletionTimestamp != nil || !Matches(cb, clusterLabels) {
		return false
	}
	// Timestamps have whole seconds: a cluster created in the baseline's
	// second counts as joining after it.
	if !created.IsZero() && created.Before(cb.CreationTimestamp.Time) {
		return false
	}
	for i := range cb.Status.Clusters {
		if cb.Status.Clusters[i].Name == cluster {
			return cb.Status.Clusters[i].BaselineReadyTime == nil
		}
	}
	return true
}
