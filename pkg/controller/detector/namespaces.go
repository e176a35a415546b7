package detector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// namespaceAutoProvision places a namespace no policy claims on every
// cluster, as Karmada's namespace sync controller does, so that a member
// has the namespace before anything is propagated into it. It tolerates
// every taint: Karmada's namespace Works go to every cluster whatever its
// taints, and a namespace never moves by failover.
var namespaceAutoProvision = &Policy{
	Cluster:       true,
	AutoProvision: true,
	Spec: &policyv1alpha1.PropagationSpec{
		Placement: policyv1alpha1.Placement{
			ClusterTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	},
}

// autoProvisioned reports whether template m is a namespace that goes to
// every cluster when no policy claims it (names.NamespaceAutoProvisioned).
// The skip label is read each time: added later, it releases the binding and
// leaves the member namespaces where they are, as Karmada leaves its Works.
func (d *Detector) autoProvisioned(w *watched, m *metav1.PartialObjectMetadata) bool {
	return d.opts.NamespaceAutoProvision && w.GVR.Group == "" && w.Kind == "Namespace" &&
		names.NamespaceAutoProvisioned(m.Name, m.Labels)
}
