package cluster

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// healthTaints are the taints that follow the Ready condition.
var healthTaints = map[string]metav1.ConditionStatus{
	clusterv1alpha1.TaintClusterNotReady:    metav1.ConditionFalse,
	clusterv1alpha1.TaintClusterUnreachable: metav1.ConditionUnknown,
}

// desiredTaints returns the cluster's taints for Ready status ready:
// not-ready:NoSchedule while False, unreachable:NoSchedule while Unknown,
// neither while True. Other taints, and the NoExecute variants of these
// keys (failover owns those), are kept as they are, in order; a health
// taint that stays keeps its timeAdded; no Ready status ("") changes
// nothing. changed reports whether the
// result differs from taints.
func desiredTaints(taints []corev1.Taint, ready metav1.ConditionStatus, now metav1.Time) (out []corev1.Taint, added, removed []string, changed bool) {
	if ready == "" {
		return taints, nil, nil, false
	}
	want := ""
	for key, status := range healthTaints {
		if status == ready {
			want = key
		}
	}
	present := false
	for _, t := range taints {
		_, health := healthTaints[t.Key]
		switch {
		case !health || t.Effect != corev1.TaintEffectNoSchedule:
			out = append(out, t)
		case t.Key == want && !present:
			present = true
			out = append(out, t)
		default:
			removed = append(removed, t.Key)
		}
	}
	if want != "" && !present {
		out = append(out, corev1.Taint{Key: want, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now})
		added = append(added, want)
	}
	return out, added, removed, len(added) > 0 || len(removed) > 0
}
