package executor

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/overridemanager"
	"github.com/atoll-dev/atoll/pkg/tenancy"
	"github.com/atoll-dev/atoll/pkg/util/events"
)

// overridePolicies are the override policies that may apply to one
// template, read once per sync from the manager's cache.
type overridePolicies struct {
	cluster    []policyv1alpha1.ClusterOverridePolicy
	namespaced []policyv1alpha1.OverridePolicy
}

func (p *overridePolicies) empty() bool { return len(p.cluster) == 0 && len(p.namespaced) == 0 }

// overridePolicies lists the ClusterOverridePolicies and, for a namespaced
// template, the OverridePolicies of its namespace whose tenant boundary
// holds the template (pkg/tenancy): a tenant's override never changes
// another tenant's objects, even one written while admission was off.
func (r *reconciler) overridePolicies(ctx context.Context, template *unstructured.Unstructured) (*overridePolicies, error) {
	out := &overridePolicies{}
	var cops policyv1alpha1.ClusterOverridePolicyList
	if err := r.client.List(ctx, &cops); err != nil {
		return nil, fmt.Errorf("listing ClusterOverridePolicies: %w", err)
	}
	out.cluster = cops.Items
	namespace := template.GetNamespace()
	if namespace == "" {
		return out, nil
	}
	var ops policyv1alpha1.OverridePolicyList
	if err := r.client.List(ctx, &ops, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing OverridePolicies of namespace %s: %w", namespace, err)
	}
	out.namespaced = ops.Items
	if len(ops.Items) == 0 {
		return out, nil
	}
	set, err := tenancy.Load(ctx, r.client)
	if err != nil {
		return nil, err
	}
	if !set.Empty() {
		out.namespaced = slices.DeleteFunc(out.namespaced, func(op policyv1alpha1.OverridePolicy) bool {
			ok, why := set.ForPolicy(op.Namespace, op.Annotations).OwnsTemplate(namespace, template.GetLabels())
			if !ok {
				klog.FromContext(ctx).V(1).Info("Override policy does not apply: the template is outside its tenant's boundary",
					"policy", klog.KObj(&op), "template", klog.KObj(template), "reason", why)
			}
			return !ok
		})
	}
	return out, nil
}

// override applies the override policies for cluster to desired and records
// the applied policies in the applied-overrides annotations. The error
// names the policy and the path that failed.
func (r *reconciler) override(ctx context.Context, desired *unstructured.Unstructured, cluster string, policies *overridePolicies) (*unstructured.Unstructured, []overridemanager.Applied, error) {
	if policies.empty() {
		return desired, nil, nil
	}
	var c clusterv1alpha1.Cluster
	if err := r.client.Get(ctx, types.NamespacedName{Name: cluster}, &c); err != nil {
		return nil, nil, fmt.Errorf("cluster %s: reading the Cluster for overrides: %w", cluster, err)
	}
	out, applied, err := overridemanager.Apply(desired, &c, policies.cluster, policies.namespaced)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if len(applied) > 0 {
		out.SetAnnotations(merge(out.GetAnnotations(), overridemanager.Annotations(applied)))
	}
	return out, applied, nil
}

// overridesApplied records Karmada's ApplyOverridePolicySucceed on the
// template for each policy that changed what was just written to cluster.
func (r *reconciler) overridesApplied(spec *workv1alpha2.ResourceBindingSpec, cluster string, applied []overridemanager.Applied) {
	for _, a := range applied {
		if a.PolicyKind == policyv1alpha1.ResourceKindClusterOverridePolicy {
			r.recorder.Eventf(events.Template(spec), nil, corev1.EventTypeNormal, events.ApplyOverridePolicySucceed, "Override",
				"Apply cluster override policy(%s) for cluster(%s) succeed.", a.PolicyName, cluster)
			continue
		}
		r.recorder.Eventf(events.Template(spec), nil, corev1.EventTypeNormal, events.ApplyOverridePolicySucceed, "Override",
			"Apply override policy(%s/%s) for cluster(%s) succeed.", a.Namespace, a.PolicyName, cluster)
	}
}

func (r *reconciler) overrideFailed(b client.Object, cluster string, err error) {
	r.recorder.Eventf(b, nil, corev1.EventTypeWarning, "OverrideFailed", "Override", "Overrides for cluster %s failed: %v", cluster, err)
}
