// Package admission holds the admission rules atoll installs in the control
// plane beside its CRDs: ValidatingAdmissionPolicies, evaluated by the API
// server itself, so there is no webhook server to keep alive. The executor
// enforces the same rules again (defence in depth: an object written while
// a policy was missing is still never acted on).
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// BindingScopePolicy keeps every binding in its room: a ResourceBinding
// refers only to a template of its own namespace, a ClusterResourceBinding
// only to a cluster-scoped one, and no ResourceBinding lives in a reserved
// namespace (names.ReservedNamespaces: kube-system, the member credentials
// in karmada-cluster, ...). Without it, anyone allowed to create a binding
// in their namespace could have atoll copy another namespace's Secrets into
// every member.
const BindingScopePolicy = "atoll-binding-scope"

// Policies returns the policies and their bindings, in apply order.
func Policies() (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	group := workv1alpha2.GroupVersion.Group
	var reserved, prefixes []string
	for _, ns := range names.ReservedNamespaces() {
		if p, ok := strings.CutSuffix(ns, "*"); ok {
			prefixes = append(prefixes, fmt.Sprintf("object.metadata.namespace.startsWith(%q)", p))
		} else {
			reserved = append(reserved, fmt.Sprintf("%q", ns))
		}
	}
	inReserved := fmt.Sprintf("object.metadata.namespace in [%s]", strings.Join(reserved, ", "))
	if len(prefixes) > 0 {
		inReserved += " || " + strings.Join(prefixes, " || ")
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: BindingScopePolicy, Labels: map[string]string{"app.kubernetes.io/managed-by": names.FieldManager}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{group}, APIVersions: []string{"*"},
							Resources: []string{"resourcebindings", "clusterresourcebindings"},
						},
					},
				}},
			},
			// A binding on its way out may always lose its finalizer.
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "not-deleting", Expression: "!has(object.metadata.deletionTimestamp)",
			}},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: "request.resource.resource != 'resourcebindings' || (has(object.spec.resource.namespace) && object.spec.resource.namespace == object.metadata.namespace)",
					Message:    "spec.resource.namespace must be the ResourceBinding's own namespace: a binding refers only to a template in its namespace",
					Reason:     ptr.To(metav1.StatusReasonInvalid),
				},
				{
					Expression: "request.resource.resource != 'clusterresourcebindings' || !has(object.spec.resource.namespace) || object.spec.resource.namespace == ''",
					Message:    "spec.resource.namespace must be empty: a ClusterResourceBinding refers only to a cluster-scoped template",
					Reason:     ptr.To(metav1.StatusReasonInvalid),
				},
				{
					Expression:        fmt.Sprintf("request.resource.resource != 'resourcebindings' || !(%s)", inReserved),
					MessageExpression: "'metadata.namespace: no ResourceBinding may exist in the reserved namespace ' + object.metadata.namespace + '; atoll never propagates from it'",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: BindingScopePolicy, Labels: policy.Labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        BindingScopePolicy,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

// Manifests returns the policies as YAML documents (for `atoll crds`).
func Manifests() ([][]byte, error) {
	policy, binding := Policies()
	var out [][]byte
	for _, obj := range []any{policy, binding} {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding admission policy: %w", err)
		}
		out = append(out, data)
	}
	return out, nil
}

// Apply installs the policies with server-side apply.
func Apply(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	policy, binding := Policies()
	opts := metav1.PatchOptions{FieldManager: names.FieldManager, Force: ptr.To(true)}
	body, err := json.Marshal(policy)
	if err != nil {
		return err
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Patch(ctx, policy.Name, types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicy %s: %w", policy.Name, err)
	}
	if body, err = json.Marshal(binding); err != nil {
		return err
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Patch(ctx, binding.Name, types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("applying ValidatingAdmissionPolicyBinding %s: %w", binding.Name, err)
	}
	return nil
}

// OutOfRoom reports why a binding may not be acted on ("" when it may): the
// same rules as BindingScopePolicy, for bindings written while the policy
// was missing. namespaced is true for a ResourceBinding.
func OutOfRoom(namespaced bool, bindingNamespace string, spec *workv1alpha2.ResourceBindingSpec, reserved []string) string {
	switch {
	case namespaced && spec.Resource.Namespace != bindingNamespace:
		return fmt.Sprintf("spec.resource.namespace %q is not the binding's namespace %q", spec.Resource.Namespace, bindingNamespace)
	case !namespaced && spec.Resource.Namespace != "":
		return fmt.Sprintf("spec.resource.namespace %q is set on a ClusterResourceBinding", spec.Resource.Namespace)
	case namespaced && names.NamespaceListed(reserved, bindingNamespace):
		return fmt.Sprintf("namespace %s is reserved; atoll never propagates from it", bindingNamespace)
	}
	return ""
}
