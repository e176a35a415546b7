// Package indexer holds every field index of the controller-manager's
// cache: one name per index, one Setup that registers them all, so two
// controllers never register the same index twice or under two names.
package indexer

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// Index names.
const (
	// BindingsByCluster indexes ResourceBindings and ClusterResourceBindings
	// by every cluster they are placed on (spec.clusters) or that their
	// status lists (status.aggregatedStatus), so a cluster event reads only
	// the bindings that concern it.
	BindingsByCluster = "atoll.dev/bindings-by-cluster"

	// RequiredBy indexes attached ResourceBindings by the name of every
	// binding that requires them (spec.requiredBy).
	RequiredBy = "atoll.dev/required-by"

	// ScaleTarget indexes HorizontalPodAutoscalers by the template they
	// scale, ScaleTargetKey(group, kind, name).
	ScaleTarget = "atoll.dev/scale-target"

	// PolicySelectorGroupKind indexes PropagationPolicies and
	// ClusterPropagationPolicies by SelectorKey of each resource selector,
	// so a template is only compared with the policies that name its kind.
	PolicySelectorGroupKind = "atoll.dev/policy-selector-group-kind"

	// RebalanceBinding indexes Rebalances by the name of their workload's
	// ResourceBinding, so a binding event finds the move driving it.
	RebalanceBinding = "atoll.dev/rebalance-binding"

	// BaselinePolicy indexes the bindings a ClusterBaseline places
	// (spec.schedulerName atoll-baseline) by the name of the generated
	// ClusterPropagationPolicy that claims them.
	BaselinePolicy = "atoll.dev/baseline-policy"

	// WorkloadGroup indexes ResourceBindings by their workload affinity
	// groups, AffinityKey and AntiAffinityKey of
	// spec.workloadAffinityGroups, so the scheduler reads only the
	// bindings of a group (with client.InNamespace: groups are namespaced).
	WorkloadGroup = "atoll.dev/workload-group"
)

// FieldIndexer is the manager's field indexer.
type FieldIndexer interface {
	IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error
}

// Setup registers every index.
func Setup(ctx context.Context, fi FieldIndexer) error {
	for _, ix := range []struct {
		obj     client.Object
		name    string
		extract client.IndexerFunc
	}{
		{&workv1alpha2.ResourceBinding{}, BindingsByCluster, func(o client.Object) []string {
			b := o.(*workv1alpha2.ResourceBinding)
			return clustersOf(&b.Spec, &b.Status)
		}},
		{&workv1alpha2.ClusterResourceBinding{}, BindingsByCluster, func(o client.Object) []string {
			b := o.(*workv1alpha2.ClusterResourceBinding)
			return clustersOf(&b.Spec, &b.Status)
		}},
		{&workv1alpha2.ResourceBinding{}, RequiredBy, requiredBy},
		{&workv1alpha2.ResourceBinding{}, BaselinePolicy, func(o client.Object) []string {
			return baselinePolicy(o, &o.(*workv1alpha2.ResourceBinding).Spec)
		}},
		{&workv1alpha2.ClusterResourceBinding{}, BaselinePolicy, func(o client.Object) []string {
			return baselinePolicy(o, &o.(*workv1alpha2.ClusterResourceBinding).Spec)
		}},
		{&workv1alpha2.ResourceBinding{}, WorkloadGroup, func(o client.Object) []string {
			return WorkloadGroupKeys(o.(*workv1alpha2.ResourceBinding).Spec.WorkloadAffinityGroups)
		}},
		{&policyv1alpha1.PropagationPolicy{}, PolicySelectorGroupKind, func(o client.Object) []string {
			return selectorKeys(o.(*policyv1alpha1.PropagationPolicy).Spec.ResourceSelectors)
		}},
		{&policyv1alpha1.ClusterPropagationPolicy{}, PolicySelectorGroupKind, func(o client.Object) []string {
			return selectorKeys(o.(*policyv1alpha1.ClusterPropagationPolicy).Spec.ResourceSelectors)
		}},
		{&autoscalingv2.HorizontalPodAutoscaler{}, ScaleTarget, scaleTarget},
		{&appsv1alpha1.Rebalance{}, RebalanceBinding, func(o client.Object) []string {
			w := o.(*appsv1alpha1.Rebalance).Spec.Workload
			return []string{names.BindingName(w.Kind, w.Name)}
		}},
	} {
		if err := fi.IndexField(ctx, ix.obj, ix.name, ix.extract); err != nil {
			return fmt.Errorf("index %s on %T: %w", ix.name, ix.obj, err)
		}
	}
	return nil
}

// AffinityKey and AntiAffinityKey are the WorkloadGroup index values of
// an affinity and an anti-affinity group.
func AffinityKey(group string) string     { return "affinity/" + group }
func AntiAffinityKey(group string) string { return "anti-affinity/" + group }

// WorkloadGroupKeys are the WorkloadGroup index values of g.
func WorkloadGroupKeys(g *workv1alpha2.WorkloadAffinityGroups) []string {
	if g == nil {
		return nil
	}
	var out []string
	if g.AffinityGroup != "" {
		out = append(out, AffinityKey(g.AffinityGroup))
	}
	if g.AntiAffinityGroup != "" {
		out = append(out, AntiAffinityKey(g.AntiAffinityGroup))
	}
	return out
}

func clustersOf(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) []string {
	set := map[string]bool{}
	for _, c := range spec.Clusters {
		set[c.Name] = true
	}
	for _, item := range status.AggregatedStatus {
		set[item.ClusterName] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	return out
}

func baselinePolicy(o client.Object, spec *workv1alpha2.ResourceBindingSpec) []string {
	name := o.GetAnnotations()[policyv1alpha1.ClusterPropagationPolicyAnnotation]
	if spec.SchedulerName != appsv1alpha1.SchedulerName || name == "" {
		return nil
	}
	return []string{name}
}

func requiredBy(o client.Object) []string {
	b := o.(*workv1alpha2.ResourceBinding)
	if !names.IsAttached(b.Labels) {
		return nil
	}
	out := make([]string, 0, len(b.Spec.RequiredBy))
	for _, s := range b.Spec.RequiredBy {
		out = append(out, s.Name)
	}
	return out
}

func scaleTarget(o client.Object) []string {
	ref := o.(*autoscalingv2.HorizontalPodAutoscaler).Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.Name == "" {
		return nil
	}
	return []string{ScaleTargetKey(gv.Group, ref.Kind, ref.Name)}
}

// ScaleTargetKey is the ScaleTarget index value of a template.
func ScaleTargetKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

func selectorKeys(selectors []policyv1alpha1.ResourceSelector) []string {
	var keys []string
	seen := map[string]bool{}
	for _, s := range selectors {
		if k := SelectorKey(s.APIVersion, s.Kind); k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// SelectorKey is the PolicySelectorGroupKind value of a selector or
// template: group and kind, so a selector naming any served version of a
// resource finds templates watched at the preferred one ("" for an
// apiVersion that does not parse).
func SelectorKey(apiVersion, kind string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group + "|" + kind
}
