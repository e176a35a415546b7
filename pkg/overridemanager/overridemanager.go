package overridemanager

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// Annotations on a member object listing the policies applied to it, in
// the order applied (names separated by commas). Karmada puts these keys on
// its Work objects; atoll has no Work, so they go on the member object.
const (
	AppliedOverridesAnnotation        = "policy.karmada.io/applied-overrides"
	AppliedClusterOverridesAnnotation = "policy.karmada.io/applied-cluster-overrides"
)

// Applied names a policy that changed the manifest.
type Applied struct {
	PolicyKind string
	PolicyName string
	Namespace  string
}

// implicit priorities of a policy for a resource, lowest first.
const (
	mismatch = iota
	matchAll // no resourceSelectors
	matchKind
	matchLabelSelector
	matchName
)

// selectorPriority is how specifically s selects obj.
func selectorPriority(obj *unstructured.Unstructured, s *policyv1alpha1.ResourceSelector) int {
	if s.APIVersion != obj.GetAPIVersion() || s.Kind != obj.GetKind() {
		return mismatch
	}
	if s.Namespace != "" && s.Namespace != obj.GetNamespace() {
		return mismatch
	}
	if s.Name != "" {
		if s.Name == obj.GetName() {
			return matchName
		}
		return mismatch
	}
	if s.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(obj.GetLabels())) {
			return mismatch
		}
		return matchLabelSelector
	}
	return matchKind
}

func policyPriority(obj *unstructured.Unstructured, spec *policyv1alpha1.OverrideSpec) int {
	if len(spec.ResourceSelectors) == 0 {
		return matchAll
	}
	best := mismatch
	for i := range spec.ResourceSelectors {
		best = max(best, selectorPriority(obj, &spec.ResourceSelectors[i]))
	}
	return best
}

type candidate struct {
	applied  Applied
	spec     *policyv1alpha1.OverrideSpec
	priority int
}

// Apply returns a copy of obj with the overrides for cluster applied and
// the policies that applied (those with at least one rule for the cluster),
// in order. OverridePolicies apply only to namespaced objects of their own
// namespace. An error names the policy and the path that failed; the
// returned object is then nil.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	clusterPolicies []policyv1alpha1.ClusterOverridePolicy, policies []policyv1alpha1.OverridePolicy) (*unstructured.Unstructured, []Applied, error) {
	var cops, ops []candidate
	for i := range clusterPolicies {
		p := &clusterPolicies[i]
		if pr := policyPriority(obj, &p.Spec); pr != mismatch {
			cops = append(cops, candidate{Applied{PolicyKind: policyv1alpha1.ResourceKindClusterOverridePolicy, PolicyName: p.Name}, &p.Spec, pr})
		}
	}
	if obj.GetNamespace() != "" {
		for i := range policies {
			p := &policies[i]
			if p.Namespace != obj.GetNamespace() {
				continue
			}
			if pr := policyPriority(obj, &p.Spec); pr != mismatch {
				ops = append(ops, candidate{Applied{PolicyKind: policyv1alpha1.ResourceKindOverridePolicy, PolicyName: p.Name, Namespace: p.Namespace}, &p.Spec, pr})
			}
		}
	}
	out := obj.DeepCopy()
	var applied []Applied
	for _, set := range [][]candidate{cops, ops} {
		sort.SliceStable(set, func(i, j int) bool {
			if set[i].priority != set[j].priority {
				return set[i].priority < set[j].priority
			}
			return set[i].applied.PolicyName < set[j].applied.PolicyName
		})
		for _, c := range set {
			ok, err := applyPolicy(out, cluster, c.spec)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.applied, err)
			}
			if ok {
				applied = append(applied, c.applied)
			}
		}
	}
	return out, applied, nil
}

// String is "OverridePolicy ns/name" or "ClusterOverridePolicy name".
func (a Applied) String() string {
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", a.PolicyKind, a.Namespace, a.PolicyName)
	}
	return fmt.Sprintf("%s %s", a.PolicyKind, a.PolicyName)
}

// applyPolicy applies the rules of spec that target cluster, and the
// deprecated targetCluster + overriders pair; it reports whether any rule
// targeted the cluster.
func applyPolicy(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, spec *policyv1alpha1.OverrideSpec) (bool, error) {
	rules := spec.OverrideRules
	if len(rules) == 0 {
		rules = []policyv1alpha1.RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}
	}
	matched := false
	for i := range rules {
		r := &rules[i]
		match, err := clusteraffinity.Matches(cluster, r.TargetCluster)
		if err != nil {
			return false, fmt.Errorf("overrideRules[%d].targetCluster: %w", i, err)
		}
		if !match {
			continue
		}
		matched = true
		before := identityOf(obj)
		if err := applyOverriders(obj, &r.Overriders); err != nil {
			return false, err
		}
		if field := before.changedIn(obj); field != "" {
			return false, fmt.Errorf("overrideRules[%d]: changes %s; an override may not change the object's identity (%s)",
				i, field, strings.Join(identityFields, ", "))
		}
	}
	return matched, nil
}

// identityFields are the fields that say which object a manifest is. No
// override may change them: moving a template into another namespace (say
// kube-system of every member) or renaming it would make atoll write where
// its policy was never allowed to.
var identityFields = []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.generateName",
	"metadata.ownerReferences", "metadata.managedFields"}

// identity is a snapshot of an object's identity fields.
type identity []any

func identityOf(obj *unstructured.Unstructured) identity {
	out := make(identity, len(identityFields))
	for i, f := range identityFields {
		v, _, _ := unstructured.NestedFieldCopy(obj.Object, strings.Split(f, ".")...)
		out[i] = v
	}
	return out
}

// changedIn names the first identity field obj no longer has as recorded,
// "" when none changed.
func (id identity) changedIn(obj *unstructured.Unstructured) string {
	if _, ok := obj.Object["metadata"].(map[string]any); !ok && obj.Object["metadata"] != nil {
		return "metadata"
	}
	now := identityOf(obj)
	for i, f := range identityFields {
		if !semantic.Equal(id[i], now[i]) {
			return f
		}
	}
	return ""
}

// Annotations returns the applied-overrides annotations for applied: the
// names of the OverridePolicies and of the ClusterOverridePolicies, each in
// the order applied, joined by commas. Keys without policies are absent.
func Annotations(applied []Applied) map[string]string {
	out := map[string]string{}
	for _, a := range applied {
		key := AppliedClusterOverridesAnnotation
		if a.PolicyKind == policyv1alpha1.ResourceKindOverridePolicy {
			key = AppliedOverridesAnnotation
		}
		if out[key] != "" {
			out[key] += ","
		}
		out[key] += a.PolicyName
	}
	return out
}
