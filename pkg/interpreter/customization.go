package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter/script"
)

// Source lists the ResourceInterpreterCustomizations whose target is one
// kind (the controller-manager's is its informer's store, IndexSource).
// The slice is the caller's; the customizations it points to are shared
// and only read.
type Source interface {
	ForKind(ctx context.Context, gvk schema.GroupVersionKind) ([]*configv1alpha1.ResourceInterpreterCustomization, error)
}

// Customizations holds the compiled scripts of the customizations Source
// lists, recompiling one only when its resourceVersion changes.
type Customizations struct {
	source Source
	limits script.Limits

	mu    sync.Mutex
	cache map[string]compiledCustomization // by customization name
}

type compiledCustomization struct {
	resourceVersion string
	ops             map[Operation]*compiled
}

// compiled is one operation's script of one customization.
type compiled struct {
	customization   string
	resourceVersion string
	op              Operation
	script          *script.Script
	err             error // the script did not compile
	limits          script.Limits
}

// NewCustomizations reads customizations from source; limits bound every
// script call.
func NewCustomizations(source Source, limits script.Limits) *Customizations {
	return &Customizations{source: source, limits: limits, cache: map[string]compiledCustomization{}}
}

// lookup returns the script for op of the first customization (by name, as
// Karmada merges several) targeting gvk that has one; nil when none does.
func (c *Customizations) lookup(ctx context.Context, gvk schema.GroupVersionKind, op Operation) (*compiled, error) {
	all, err := c.lookupAll(ctx, gvk, op)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return all[0], nil
}

// lookupAll returns op's scripts of every customization targeting gvk, by
// name (Karmada runs every dependencyInterpretation script and unites the
// results).
func (c *Customizations) lookupAll(ctx context.Context, gvk schema.GroupVersionKind, op Operation) ([]*compiled, error) {
	list, err := c.source.ForKind(ctx, gvk)
	if err != nil {
		return nil, fmt.Errorf("listing ResourceInterpreterCustomizations for %s: %w", gvk, err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var out []*compiled
	for _, ric := range list {
		if ric.Spec.Target.APIVersion != gvk.GroupVersion().String() || ric.Spec.Target.Kind != gvk.Kind {
			continue
		}
		if src := scriptOf(&ric.Spec.Customizations, op); src != "" {
			out = append(out, c.compiledOp(ric, op, src))
		}
	}
	return out, nil
}

func (c *Customizations) compiledOp(ric *configv1alpha1.ResourceInterpreterCustomization, op Operation, src string) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.cache[ric.Name]
	if !ok || entry.resourceVersion != ric.ResourceVersion || ric.ResourceVersion == "" {
		entry = compiledCustomization{resourceVersion: ric.ResourceVersion, ops: map[Operation]*compiled{}}
		c.cache[ric.Name] = entry
	}
	if cc, ok := entry.ops[op]; ok {
		return cc
	}
	s, err := script.Compile(ric.Name+"/"+string(op), src, map[string]script.Library{"kube": kubeLibrary})
	cc := &compiled{customization: ric.Name, resourceVersion: ric.ResourceVersion, op: op, script: s, err: err, limits: c.limits}
	entry.ops[op] = cc
	return cc
}

// rules are the customization's rule of each operation.
var rules = map[Operation]func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript{
	Retention:            func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.Retention },
	ReplicaResource:      func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.ReplicaResource },
	ReplicaRevision:      func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.ReplicaRevision },
	StatusReflection:     func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.StatusReflection },
	StatusAggregation:    func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.StatusAggregation },
	HealthInterpretation: func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.HealthInterpretation },
	DependencyInterpretation: func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript {
		return r.DependencyInterpretation
	},
	ComponentResource: func(r *configv1alpha1.CustomizationRules) *configv1alpha1.LuaScript { return r.ComponentResource },
}

// scriptOf is the Lua source of op's rule, "" when there is none.
func scriptOf(r *configv1alpha1.CustomizationRules, op Operation) string {
	if rule := rules[op](r); rule != nil {
		return rule.LuaScript
	}
	return ""
}

// call runs the operation's function; every failure is an *Error.
func (c *compiled) call(ctx context.Context, fn string, nret int, ref any, args ...any) ([]any, error) {
	if c.err != nil {
		return nil, c.fail(c.err)
	}
	start := time.Now() // a measurement, not a decision
	out, err := c.script.Call(ctx, c.limits, fn, nret, ref, args...)
	scriptSeconds.WithLabelValues(string(c.op)).Observe(time.Since(start).Seconds())
	if err != nil {
		scriptCalls.WithLabelValues(string(c.op), "error").Inc()
		return nil, c.fail(err)
	}
	scriptCalls.WithLabelValues(string(c.op), "success").Inc()
	return out, nil
}

func (c *compiled) fail(err error) error {
	return &Error{Customization: c.customization, Operation: c.op, Err: err}
}

func (c *compiled) replicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	out, err := c.call(ctx, "GetReplicas", 2, nil, obj.Object)
	if err != nil {
		return 0, nil, err
	}
	n, ok := out[0].(int64)
	if !ok || n < 0 || n > 1<<31-1 {
		return 0, nil, c.fail(fmt.Errorf("GetReplicas returned %v for the replicas, want a whole number from 0 to 2147483647", out[0]))
	}
	if out[1] == nil {
		return int32(n), nil, nil
	}
	req := &workv1alpha2.ReplicaRequirements{}
	if err := decode(out[1], req); err != nil {
		return 0, nil, c.fail(fmt.Errorf("GetReplicas returned requirements that are not a ReplicaRequirements: %w", err))
	}
	return int32(n), req, nil
}

func (c *compiled) revise(ctx context.Context, obj *unstructured.Unstructured, share int64) (*unstructured.Unstructured, error) {
	out, err := c.call(ctx, "ReviseReplica", 1, obj.Object, obj.Object, share)
	if err != nil {
		return nil, err
	}
	return c.sameObject("ReviseReplica", obj, out[0])
}

func (c *compiled) retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := c.call(ctx, "Retain", 1, desired.Object, desired.Object, observed.Object)
	if err != nil {
		return nil, err
	}
	return c.sameObject("Retain", desired, out[0])
}

// sameObject checks that a script returned an object with the identity of
// the one it was given: a script may change fields, never which object
// atoll writes.
func (c *compiled) sameObject(fn string, in *unstructured.Unstructured, result any) (*unstructured.Unstructured, error) {
	m, ok := result.(map[string]any)
	if !ok {
		return nil, c.fail(fmt.Errorf("%s returned %T, want the object", fn, result))
	}
	out := &unstructured.Unstructured{Object: m}
	if out.GetAPIVersion() != in.GetAPIVersion() || out.GetKind() != in.GetKind() ||
		out.GetName() != in.GetName() || out.GetNamespace() != in.GetNamespace() {
		return nil, c.fail(fmt.Errorf("%s changed the object's apiVersion, kind, name or namespace", fn))
	}
	return out, nil
}

func (c *compiled) reflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	out, err := c.call(ctx, "ReflectStatus", 1, status, obj.Object)
	if err != nil {
		return nil, err
	}
	switch s := out[0].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return s, nil
	}
	return nil, c.fail(fmt.Errorf("ReflectStatus returned %T, want a table", out[0]))
}

func (c *compiled) health(ctx context.Context, obj *unstructured.Unstructured) (workv1alpha2.ResourceHealth, error) {
	out, err := c.call(ctx, "InterpretHealth", 1, nil, obj.Object)
	if err != nil {
		return workv1alpha2.ResourceUnknown, err
	}
	healthy, ok := out[0].(bool)
	if !ok {
		return workv1alpha2.ResourceUnknown, c.fail(fmt.Errorf("InterpretHealth returned %T, want a boolean", out[0]))
	}
	return healthIf(healthy), nil
}

func (c *compiled) aggregateStatus(ctx context.Context, template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (map[string]any, error) {
	plainItems := make([]any, 0, len(items))
	for _, item := range items {
		m := map[string]any{"clusterName": item.ClusterName, "applied": item.Applied, "health": string(item.Health)}
		if s := StatusOf(item); s != nil {
			m["status"] = s
		}
		plainItems = append(plainItems, m)
	}
	obj := template.DeepCopy()
	out, err := c.call(ctx, "AggregateStatus", 1, obj.Object, obj.Object, plainItems)
	if err != nil {
		return nil, err
	}
	result, err := c.sameObject("AggregateStatus", template, out[0])
	if err != nil {
		return nil, err
	}
	status, _, _ := unstructured.NestedMap(result.Object, "status")
	if status == nil {
		status = map[string]any{}
	}
	return status, nil
}

func (c *compiled) dependencies(ctx context.Context, obj *unstructured.Unstructured) ([]Dependency, error) {
	out, err := c.call(ctx, "GetDependencies", 1, nil, obj.Object)
	if err != nil {
		return nil, err
	}
	if out[0] == nil {
		return nil, nil
	}
	var deps []Dependency
	if err := decode(out[0], &deps); err != nil {
		return nil, c.fail(fmt.Errorf("GetDependencies returned something other than a list of references: %w", err))
	}
	for i, d := range deps {
		if d.APIVersion == "" || d.Kind == "" || (d.Name == "" && d.LabelSelector == nil) {
			return nil, c.fail(fmt.Errorf("GetDependencies: dependency %d needs apiVersion, kind and a name or labelSelector", i+1))
		}
	}
	return deps, nil
}

// decode converts a plain value into a typed one through JSON.
func decode(v any, into any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// plain converts a typed value into plain values through JSON.
func plain(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// kubeLibrary is Karmada's require("kube") for scripts.
var kubeLibrary = script.Library{
	"accuratePodRequirements": func(args []any) (any, error) {
		if len(args) != 1 {
			return nil, errors.New("takes one argument, the pod template")
		}
		var t corev1.PodTemplateSpec
		if err := decode(args[0], &t); err != nil {
			return nil, fmt.Errorf("the argument is not a pod template: %w", err)
		}
		return plain(podRequirements(&t))
	},
	"getPodDependencies": func(args []any) (any, error) {
		if len(args) != 2 {
			return nil, errors.New("takes two arguments, the pod template and the namespace")
		}
		var t corev1.PodTemplateSpec
		if err := decode(args[0], &t); err != nil {
			return nil, fmt.Errorf("the argument is not a pod template: %w", err)
		}
		ns, _ := args[1].(string)
		if ns == "" {
			ns = "default"
		}
		deps := podDependencies(&t.Spec)
		for i := range deps {
			deps[i].Namespace = ns
		}
		return plain(deps)
	},
	"resourceAdd": func(args []any) (any, error) {
		var sum resource.Quantity
		for i, a := range args {
			if a == nil {
				continue
			}
			s, ok := a.(string)
			if !ok {
				s = fmt.Sprint(a)
			}
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %w", i+1, err)
			}
			sum.Add(q)
		}
		return sum.String(), nil
	},
}
