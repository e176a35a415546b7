package detector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/atoll-dev/atoll/pkg/util/events"
)

// policyApplied records Karmada's events on template m after its binding
// was written for policy p (err nil), or failed to be (err): ApplyPolicy
// Succeed or Failed, and GetReplicasSucceed when the replicas were read from
// the template for this write. Only writes record events, so an
// unchanged template after a restart records none.
func (d *Detector) policyApplied(w *watched, m *metav1.PartialObjectMetadata, p *Policy, in bindingInput, err error) {
	if p.AutoProvision {
		return // no policy to name (Karmada's namespace sync records none)
	}
	ref := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: w.GVR.GroupVersion().String(), Kind: w.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion},
	}
	name := "policy(" + p.Namespace + "/" + p.Name + ")"
	if p.Cluster {
		name = "cluster policy(" + p.Name + ")"
	}
	if err != nil {
		d.recorder.Eventf(ref, nil, corev1.EventTypeWarning, events.ApplyPolicyFailed, "ApplyPolicy", "Apply %s failed: %v", name, err)
		return
	}
	d.recorder.Eventf(ref, nil, corev1.EventTypeNormal, events.ApplyPolicySucceed, "ApplyPolicy", "Apply %s succeed", name)
	if in.ReplicasRead {
		d.recorder.Eventf(ref, nil, corev1.EventTypeNormal, events.GetReplicasSucceed, "GetReplicas", "Get replicas of resource template successfully.")
	}
}
