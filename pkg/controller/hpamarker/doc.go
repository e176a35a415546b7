// Package hpamarker is Karmada's hpaScaleTargetMarker: it keeps Karmada's
// retain-replicas label (interpreter.RetainReplicasLabel, value "true") on
// every Deployment and StatefulSet template in the control plane that a
// HorizontalPodAutoscaler (autoscaling/v2) of the same namespace targets.
// With that label the executor leaves spec.replicas out of the member
// manifests, so the HPA propagated with the workload owns the replica count
// in each member.
//
// The root is the template (kind, namespace, name). A template gets the
// label, together with annotation workv1alpha2.RetainReplicasByHPAAnnotation, when
// an HPA that is not being deleted targets it; it loses both when none does
// any more. A label the user set (without the annotation) is never removed.
// HPAs are read from the manager's cache through an index on their scale
// target; templates are watched metadata-only (creation and label or
// annotation changes), so a Deployment created after its HPA is marked too,
// and writes are metadata merge patches with optimistic locking, made only
// when something must change.
package hpamarker
