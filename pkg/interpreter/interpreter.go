// Package interpreter is the one place that knows kinds. Every controller
// asks it, never switches on a kind itself:
//
//   - the detector: how many replicas a template asks for, and what one
//     replica needs (Replicas);
//   - the executor: the manifest for one member with its share of the
//     replicas (Render), what the member keeps of its own (Retain), what to
//     record of a member object's status (ReflectStatus), its health
//     (Health), and the template's status from all clusters
//     (AggregateStatus);
//   - the dependencies controller: what a workload needs alongside it
//     (Dependencies);
//   - the hpa-marker and overrides: which kinds scale and where their pod
//     templates are.
//
// Each operation asks the kind's ResourceInterpreterCustomization first (a
// Karmada Lua script, run in a sandbox) and falls back to atoll's native
// knowledge of the kind (kinds.go), as Karmada's interpreter does.
package interpreter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// RetainReplicasLabel on a template (Karmada's) says member clusters own
// spec.replicas (a member HPA scales the workload): atoll does not set it.
const RetainReplicasLabel = workv1alpha2.RetainReplicasLabel

// Operation names an interpreter operation with Karmada's customization
// field name.
type Operation string

// The operations, named as the fields of a customization.
const (
	ReplicaResource          Operation = "replicaResource"
	ReplicaRevision          Operation = "replicaRevision"
	Retention                Operation = "retention"
	StatusReflection         Operation = "statusReflection"
	StatusAggregation        Operation = "statusAggregation"
	HealthInterpretation     Operation = "healthInterpretation"
	DependencyInterpretation Operation = "dependencyInterpretation"
	ComponentResource        Operation = "componentResource"
)

// Error is a customization's script failing. It names the customization and
// the operation so that the condition it ends up in says what to fix.
type Error struct {
	Customization string
	Operation     Operation
	Err           error
}

func (e *Error) Error() string {
	return fmt.Sprintf("ResourceInterpreterCustomization %s: %s: %v", e.Customization, e.Operation, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns the customization error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Interpreter answers per-kind questions for every controller.
type Interpreter struct {
	custom *Customizations
}

// New returns an interpreter that consults custom (nil: native only).
func New(custom *Customizations) *Interpreter {
	return &Interpreter{custom: custom}
}

// Native is an interpreter without customizations.
var Native = New(nil)

func (i *Interpreter) script(ctx context.Context, gvk schema.GroupVersionKind, op Operation) (*compiled, error) {
	if i == nil || i.custom == nil {
		return nil, nil
	}
	return i.custom.lookup(ctx, gvk, op)
}

// HasReplicas reports whether templates of kind gvk carry replicas that
// atoll divides: a native workload, or a kind whose customization has a
// replicaResource script.
func (i *Interpreter) HasReplicas(ctx context.Context, gvk schema.GroupVersionKind) bool {
	if c, _ := i.script(ctx, gvk, ReplicaResource); c != nil {
		return true
	}
	k := kinds[gvk.GroupKind()]
	return k.replicas != nil || k.isPod
}

// Replicas returns how many replicas obj asks for and what one replica
// needs (zero and nil for kinds without replicas).
func (i *Interpreter) Replicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	c, err := i.script(ctx, obj.GroupVersionKind(), ReplicaResource)
	if err != nil {
		return 0, nil, err
	}
	if c != nil {
		return c.replicas(ctx, obj)
	}
	n, req, err := nativeReplicas(kinds[obj.GroupVersionKind().GroupKind()], obj)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return n, req, nil
}

// RetainsReplicas reports whether the members own the replicas of this
// template (a member HPA scales it).
func (i *Interpreter) RetainsReplicas(ctx context.Context, template *unstructured.Unstructured) bool {
	_, retain := template.GetLabels()[RetainReplicasLabel]
	return retain && i.HasReplicas(ctx, template.GroupVersionKind())
}

// Render returns the manifest of template for one member cluster: identity,
// labels, annotations and spec-like fields, without status, server-set
// metadata, control-plane claim metadata and the fields each kind's member
// allocates for itself (a Service's cluster IP, a Job's selector, …). share,
// when not nil, is the cluster's share of the replicas; when the members own
// the replicas (RetainsReplicas) the native replica field is left out.
func (i *Interpreter) Render(ctx context.Context, template *unstructured.Unstructured, share *int64) (*unstructured.Unstructured, error) {
	out := render(template)
	gvk := template.GroupVersionKind()
	if i.RetainsReplicas(ctx, template) {
		if k := kinds[gvk.GroupKind()]; k.replicas != nil {
			unstructured.RemoveNestedField(out.Object, k.replicas...)
		}
		return out, nil
	}
	if share == nil {
		return out, nil
	}
	c, err := i.script(ctx, gvk, ReplicaRevision)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c.revise(ctx, out, *share)
	}
	if err := nativeRevise(kinds[gvk.GroupKind()], out, *share); err != nil {
		return nil, fmt.Errorf("setting the replicas of %s %s/%s: %w", out.GetKind(), out.GetNamespace(), out.GetName(), err)
	}
	return out, nil
}

// Retain returns desired with what the member owns in observed kept (nil
// when the object does not exist in the member yet): with a customization,
// its Retain script; natively, a Job's completions (immutable) and the
// replicas a member HPA owns
// (RetainsReplicas) — the member's current value, or the cluster's share
// when atoll creates the object. Applying the field keeps atoll a co-owner
// at the member's value; omitting it would make server-side apply remove a
// field atoll alone owned, resetting the member to one replica. Other fields
// the member owns are never rendered, and server-side apply leaves them to
// their owners.
func (i *Interpreter) Retain(ctx context.Context, template, desired, observed *unstructured.Unstructured, share *int64) (*unstructured.Unstructured, error) {
	if observed != nil {
		c, err := i.script(ctx, desired.GroupVersionKind(), Retention)
		if err != nil {
			return nil, err
		}
		if c != nil {
			return c.retain(ctx, desired, observed)
		}
	}
	gk := desired.GroupVersionKind().GroupKind()
	if gk == jobGK && observed != nil {
		// A Job's completions are immutable once created: the share it was
		// created with stays.
		if n, found, _ := unstructured.NestedInt64(observed.Object, "spec", "completions"); found {
			_ = unstructured.SetNestedField(desired.Object, n, "spec", "completions")
		}
	}
	path := kinds[gk].replicas
	if path == nil || !i.RetainsReplicas(ctx, template) {
		return desired, nil
	}
	if observed != nil {
		if n, found, _ := unstructured.NestedInt64(observed.Object, path...); found {
			_ = unstructured.SetNestedField(desired.Object, n, path...)
		}
	} else if share != nil {
		_ = unstructured.SetNestedField(desired.Object, *share, path...)
	}
	return desired, nil
}

// ReflectStatus is the part of a member object's status recorded in the
// binding (nil for none).
func (i *Interpreter) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	c, err := i.script(ctx, obj.GroupVersionKind(), StatusReflection)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c.reflectStatus(ctx, obj)
	}
	return nativeReflectStatus(obj), nil
}

// Health interprets a member object's health.
func (i *Interpreter) Health(ctx context.Context, obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	c, err := i.script(ctx, obj.GroupVersionKind(), HealthInterpretation)
	if err != nil {
		return workv1alpha2.ResourceUnknown, err
	}
	if c != nil {
		return c.health(ctx, obj)
	}
	return nativeHealth(obj), nil
}

// AggregateStatus returns the template's status from its clusters' items
// (each with the status ReflectStatus recorded), or nil when the kind
// aggregates nothing. allCurrent says every member runs the current
// manifest and has observed it.
func (i *Interpreter) AggregateStatus(ctx context.Context, template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem, allCurrent bool) (map[string]any, error) {
	c, err := i.script(ctx, template.GroupVersionKind(), StatusAggregation)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c.aggregateStatus(ctx, template, items)
	}
	return nativeAggregateStatus(template, items, allCurrent), nil
}

// Dependencies lists what obj needs in the clusters it runs in.
// With customizations, every one's dependencyInterpretation script runs and
// their results are united (Karmada's rule); the native ones then do not
// count.
func (i *Interpreter) Dependencies(ctx context.Context, obj *unstructured.Unstructured) ([]Dependency, error) {
	scripts, err := i.scripts(ctx, obj.GroupVersionKind(), DependencyInterpretation)
	if err != nil {
		return nil, err
	}
	if len(scripts) == 0 {
		return nativeDependencies(obj)
	}
	var out []Dependency
	for _, c := range scripts {
		deps, err := c.dependencies(ctx, obj)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			if !slices.ContainsFunc(out, func(o Dependency) bool { return semantic.Equal(o, d) }) {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// scripts are op's scripts of every customization of gvk.
func (i *Interpreter) scripts(ctx context.Context, gvk schema.GroupVersionKind, op Operation) ([]*compiled, error) {
	if i == nil || i.custom == nil {
		return nil, nil
	}
	return i.custom.lookupAll(ctx, gvk, op)
}

// HasDependencies reports whether objects of kind gvk can have
// dependencies.
func (i *Interpreter) HasDependencies(ctx context.Context, gvk schema.GroupVersionKind) bool {
	if c, _ := i.script(ctx, gvk, DependencyInterpretation); c != nil {
		return true
	}
	_, ok := PodTemplatePath(gvk.GroupKind())
	return ok
}
