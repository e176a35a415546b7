// Package events names the event reasons atoll shares with Karmada, so that
// tools and tests written against Karmada's events (`kubectl get events
// --field-selector reason=ScheduleBindingSucceed`) read atoll's the same
// way, and records them on the objects Karmada records them on.
//
// Events are written only when something changed (a binding written, a
// result moved, a member object applied), never on a reconcile that found
// nothing to do, so a restart writes no events either.
package events

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Karmada's reasons (pkg/events of Karmada), with the component that
// records each in atoll.
const (
	// Detector, on the template.
	ApplyPolicySucceed = "ApplyPolicySucceed"
	ApplyPolicyFailed  = "ApplyPolicyFailed"
	GetReplicasSucceed = "GetReplicasSucceed"
	// Scheduler, on the binding and its template.
	ScheduleBindingSucceed = "ScheduleBindingSucceed"
	ScheduleBindingFailed  = "ScheduleBindingFailed"
	// Executor: overrides on the template; sync and status on the binding
	// and its template.
	ApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	SyncWorkSucceed            = "SyncWorkSucceed"
	SyncWorkFailed             = "SyncWorkFailed"
	AggregateStatusSucceed     = "AggregateStatusSucceed"
	// WorkDispatching: dispatching was suspended or resumed (Karmada
	// records it on each Work).
	WorkDispatching = "WorkDispatching"
	// Dependencies: on the workload's template, its binding and the
	// attached binding.
	GetDependenciesSucceed                  = "GetDependenciesSucceed"
	SyncScheduleResultToDependenciesSucceed = "SyncScheduleResultToDependenciesSucceed"
	DependencyPolicyConflict                = "DependencyPolicyConflict"
	// Cluster controller, on the Cluster.
	TaintClusterSucceed = "TaintClusterSucceed"
	// Failover, on the binding and its template.
	EvictWorkloadFromClusterSucceed = "EvictWorkloadFromClusterSucceed"
)

// Template is a reference object for the template a binding describes, for
// recording an event on it without reading it.
func Template(spec *workv1alpha2.ResourceBindingSpec) runtime.Object {
	r := spec.Resource
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: r.APIVersion, Kind: r.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion},
	}
}

// OnBindingAndTemplate records one event on binding b and the same on its
// template, as Karmada mirrors binding events onto the resource template.
func OnBindingAndTemplate(rec events.EventRecorder, b runtime.Object, spec *workv1alpha2.ResourceBindingSpec, warning bool,
	reason, action, note string, args ...any) {
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	rec.Eventf(b, nil, typ, reason, action, note, args...)
	rec.Eventf(Template(spec), nil, typ, reason, action, note, args...)
}
