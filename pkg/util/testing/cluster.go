package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// ClusterWrapper builds a Cluster.
type ClusterWrapper struct{ clusterv1alpha1.Cluster }

// MakeCluster starts a push-mode Cluster named name.
func MakeCluster(name string) *ClusterWrapper {
	return &ClusterWrapper{clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push},
	}}
}

// Obj returns a copy of the built Cluster.
func (w *ClusterWrapper) Obj() *clusterv1alpha1.Cluster { return w.DeepCopy() }

// Label sets a label.
func (w *ClusterWrapper) Label(k, v string) *ClusterWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Provider sets spec.provider.
func (w *ClusterWrapper) Provider(p string) *ClusterWrapper {
	w.Spec.Provider = p
	return w
}

// Region sets spec.region.
func (w *ClusterWrapper) Region(r string) *ClusterWrapper {
	w.Spec.Region = r
	return w
}

// Zone sets the deprecated spec.zone.
func (w *ClusterWrapper) Zone(z string) *ClusterWrapper {
	w.Spec.Zone = z
	return w
}

// Zones sets spec.zones.
func (w *ClusterWrapper) Zones(z ...string) *ClusterWrapper {
	w.Spec.Zones = z
	return w
}

// Taint adds a taint.
func (w *ClusterWrapper) Taint(key, value string, effect corev1.TaintEffect) *ClusterWrapper {
	w.Spec.Taints = append(w.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// APIEnablement adds status.apiEnablements entries for groupVersion with
// the given kinds; the resource names are the lower-cased kinds plus "s".
func (w *ClusterWrapper) APIEnablement(groupVersion string, kinds ...string) *ClusterWrapper {
	e := clusterv1alpha1.APIEnablement{GroupVersion: groupVersion}
	for _, k := range kinds {
		e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: plural(k), Kind: k})
	}
	w.Status.APIEnablements = append(w.Status.APIEnablements, e)
	return w
}

// Condition sets a status condition.
func (w *ClusterWrapper) Condition(condType string, status metav1.ConditionStatus, reason string) *ClusterWrapper {
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, LastTransitionTime: metav1.Now(),
	})
	return w
}

// Ready sets the Ready condition to True.
func (w *ClusterWrapper) Ready() *ClusterWrapper {
	return w.Condition(clusterv1alpha1.ClusterConditionReady, metav1.ConditionTrue, "ClusterReady")
}

// Deleting sets a deletion timestamp.
func (w *ClusterWrapper) Deleting() *ClusterWrapper {
	now := metav1.Now()
	w.DeletionTimestamp = &now
	return w
}

func plural(kind string) string {
	b := []byte(kind)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b) + "s"
}

// ResourceSummary sets status.resourceSummary from "cpu", "memory", "pods"
// quantities: allocatable and allocated (allocating stays empty). Either
// list may be nil.
func (w *ClusterWrapper) ResourceSummary(allocatable, allocated map[corev1.ResourceName]string) *ClusterWrapper {
	list := func(m map[corev1.ResourceName]string) corev1.ResourceList {
		if m == nil {
			return nil
		}
		l := corev1.ResourceList{}
		for k, v := range m {
			l[k] = resource.MustParse(v)
		}
		return l
	}
	w.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: list(allocatable), Allocated: list(allocated)}
	return w
}
