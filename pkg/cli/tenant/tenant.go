// Package tenant is `atoll tenant`: it lists the tenants and describes one,
// saying who may do what where.
package tenant

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/cli/table"
	"github.com/atoll-dev/atoll/pkg/tenancy"
)

// Run dispatches `atoll tenant ACTION`.
func Run(ctx context.Context, cfg *cmds.Tenant) error {
	c, err := newClient(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	var tenants tenancyv1alpha1.TenantList
	if err := c.List(ctx, &tenants); err != nil {
		return fmt.Errorf("listing tenants: %w", err)
	}
	sort.Slice(tenants.Items, func(i, j int) bool { return tenants.Items[i].Name < tenants.Items[j].Name })
	switch cfg.Action {
	case "list":
		return list(out, tenants.Items)
	case "describe":
		set := tenancy.NewSet(tenants.Items)
		t := set.Get(cfg.Name)
		if t == nil {
			return fmt.Errorf("tenant %s not found (atoll tenant list shows them)", cfg.Name)
		}
		policies, err := policiesOf(ctx, c, set, t)
		if err != nil {
			return err
		}
		return describe(out, set, t, policies)
	}
	return fmt.Errorf("unknown action %q: use list or describe", cfg.Action)
}

func newClient(path string) (client.Client, error) {
	return kubeconfig.Client(path, tenancyv1alpha1.AddToScheme, policyv1alpha1.AddToScheme)
}

func list(out io.Writer, tenants []tenancyv1alpha1.Tenant) error {
	if len(tenants) == 0 {
		_, err := fmt.Fprintln(out, "No tenants: every user is a platform admin (Karmada's behaviour).")
		return err
	}
	tb := table.New(out, "NAME", "SUBJECTS", "NAMESPACES", "CLUSTERS", "READY", "REASON")
	for _, t := range tenants {
		ready, reason := "Unknown", ""
		if c := meta.FindStatusCondition(t.Status.Conditions, tenancyv1alpha1.ConditionReady); c != nil && c.ObservedGeneration == t.Generation {
			ready, reason = string(c.Status), c.Reason
		}
		tb.Row(t.Name, fmt.Sprint(len(t.Spec.Subjects)), t.Status.Summary.Namespaces, t.Status.Summary.Clusters, ready, reason)
	}
	return tb.Flush()
}

// policy is one PropagationPolicy or OverridePolicy acting for a tenant.
type policy struct {
	kind, namespace, name, creator string
}

// policiesOf lists the namespaced policies that act for t (pkg/tenancy's
// rule: its namespaces, and in shared ones its record).
func policiesOf(ctx context.Context, c client.Client, set *tenancy.Set, t *tenancyv1alpha1.Tenant) ([]policy, error) {
	var out []policy
	for _, ns := range t.Spec.Namespaces {
		var pps policyv1alpha1.PropagationPolicyList
		if err := c.List(ctx, &pps, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("listing PropagationPolicies in %s: %w", ns, err)
		}
		for _, p := range pps.Items {
			if set.ForPolicy(ns, p.Annotations).Name() == t.Name {
				out = append(out, policy{"PropagationPolicy", ns, p.Name, p.Annotations[tenancyv1alpha1.CreatorAnnotation]})
			}
		}
		var ops policyv1alpha1.OverridePolicyList
		if err := c.List(ctx, &ops, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("listing OverridePolicies in %s: %w", ns, err)
		}
		for _, p := range ops.Items {
			if set.ForPolicy(ns, p.Annotations).Name() == t.Name {
				out = append(out, policy{"OverridePolicy", ns, p.Name, p.Annotations[tenancyv1alpha1.CreatorAnnotation]})
			}
		}
	}
	return out, nil
}

func describe(out io.Writer, set *tenancy.Set, t *tenancyv1alpha1.Tenant, policies []policy) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Name:        %s\n", t.Name)
	if c := meta.FindStatusCondition(t.Status.Conditions, tenancyv1alpha1.ConditionReady); c != nil {
		fmt.Fprintf(&b, "Ready:       %s (%s: %s)\n", c.Status, c.Reason, c.Message)
	} else {
		b.WriteString("Ready:       Unknown (the tenant controller has not resolved it yet)\n")
	}
	b.WriteString("Subjects:\n")
	for _, s := range t.Spec.Subjects {
		name := s.Name
		if s.Namespace != "" {
			name = s.Namespace + "/" + s.Name
		}
		fmt.Fprintf(&b, "  %s %s\n", s.Kind, name)
	}
	labels := "none: it selects nothing in shared namespaces"
	if t.Spec.ResourceSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(t.Spec.ResourceSelector); err == nil {
			labels = sel.String()
		} else {
			labels = "invalid: " + err.Error()
		}
	}
	b.WriteString("Namespaces (where its subjects write PropagationPolicies and OverridePolicies):\n")
	for _, ns := range t.Spec.Namespaces {
		others := slices.DeleteFunc(slices.Clone(set.TenantsOf(ns)), func(n string) bool { return n == t.Name })
		if len(others) == 0 {
			fmt.Fprintf(&b, "  %s (every template in it is the tenant's)\n", ns)
		} else {
			fmt.Fprintf(&b, "  %s (shared with %s: the tenant's templates there are those labelled %s)\n", ns, strings.Join(others, ", "), labels)
		}
	}
	b.WriteString("Cluster set (the only clusters its policies place on):\n")
	if len(t.Status.Clusters) == 0 {
		b.WriteString("  none now\n")
	}
	for _, c := range t.Status.Clusters {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	fmt.Fprintf(&b, "  rule: %s\n", rule(&t.Spec.Clusters))
	b.WriteString("May not: ClusterPropagationPolicies or ClusterOverridePolicies; policies elsewhere; another tenant's policies\n")
	b.WriteString("Policies acting for it:\n")
	if len(policies) == 0 {
		b.WriteString("  none\n")
	}
	for _, p := range policies {
		creator := p.creator
		if creator == "" {
			creator = "not recorded"
		}
		fmt.Fprintf(&b, "  %s %s/%s (creator: %s)\n", p.kind, p.namespace, p.name, creator)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// rule renders a ClusterAffinity the way a user wrote it.
func rule(a *policyv1alpha1.ClusterAffinity) string {
	var parts []string
	if len(a.ClusterNames) > 0 {
		parts = append(parts, "clusterNames="+strings.Join(a.ClusterNames, ","))
	}
	if a.LabelSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector); err == nil {
			parts = append(parts, "labels "+sel.String())
		}
	}
	if a.FieldSelector != nil {
		for _, r := range a.FieldSelector.MatchExpressions {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
		}
	}
	if len(a.ExcludeClusters) > 0 {
		parts = append(parts, "exclude="+strings.Join(a.ExcludeClusters, ","))
	}
	if len(parts) == 0 {
		return "every cluster"
	}
	return strings.Join(parts, "; ")
}
