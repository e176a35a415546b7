package cluster

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// healthTaints are the taint keys that follow the Ready condition.
var healthTaints = map[string]metav1.ConditionStatus{
	clusterv1alpha1.TaintClusterNotReady:    metav1.ConditionFalse,
	clusterv1alpha1.TaintClusterUnreachable: metav1.ConditionUnknown,
}

// desiredTaints returns the cluster's taints for Ready status ready:
// not-ready while False, unreachable while Unknown, neither while True.
// The health taint has effect NoSchedule and, with noExecute, NoExecute as
// well (failover evicts what does not tolerate it); without noExecute a
// NoExecute health taint is left as it is (an operator's). Other taints
// are kept as they are, in order (a NoExecute one without timeAdded gets
// now); a health taint that stays keeps its
// timeAdded (tolerationSeconds count from it); no Ready status ("")
// changes nothing. added and removed name the changes as key:Effect;
// changed reports whether the result differs from taints.
func desiredTaints(taints []corev1.Taint, ready metav1.ConditionStatus, now metav1.Time, noExecute bool) (out []corev1.Taint, added, removed []string, changed bool) {
	if ready == "" {
		return taints, nil, nil, false
	}
	want := ""
	for key, status := range healthTaints {
		if status == ready {
			want = key
		}
	}
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule}
	if noExecute {
		effects = append(effects, corev1.TaintEffectNoExecute)
	}
	present := map[corev1.TaintEffect]bool{}
	for _, t := range taints {
		_, health := healthTaints[t.Key]
		owned := health && slices.Contains(effects, t.Effect)
		switch {
		case !owned:
			out = append(out, t)
		case t.Key == want && !present[t.Effect]:
			present[t.Effect] = true
			out = append(out, t)
		default:
			removed = append(removed, t.Key+":"+string(t.Effect))
		}
	}
	if want != "" {
		for _, e := range effects {
			if !present[e] {
				out = append(out, corev1.Taint{Key: want, Effect: e, TimeAdded: &now})
				added = append(added, want+":"+string(e))
			}
		}
	}
	// A NoExecute taint without timeAdded (as `kubectl patch` or a user's
	// tool writes it) gets one, as Karmada's webhook does: tolerationSeconds
	// count from it, and without it a tolerated taint would never expire.
	for i := range out {
		if out[i].Effect == corev1.TaintEffectNoExecute && out[i].TimeAdded == nil {
			out[i].TimeAdded = &now
			added = append(added, out[i].Key+":"+string(out[i].Effect)+" (timeAdded)")
		}
	}
	return out, added, removed, len(added) > 0 || len(removed) > 0
}
