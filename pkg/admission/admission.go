// Package admission holds the admission rules atoll installs in the control
// plane beside its CRDs: Validating- and MutatingAdmissionPolicies,
// evaluated by the API server itself, so there is no webhook server to keep
// alive. The binding-scope policy keeps bindings in their rooms; the
// tenancy policies (tenancy.yaml) keep tenants in theirs. The controllers
// enforce the same rules again (defence in depth: an object written while
// a policy was missing is still never acted on).
package admission

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
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

// manifests are the policies kept as YAML, because their CEL reads best as
// written: the tenant boundaries (see tenancy.yaml's header) and deletion
// protection.
//
//go:embed tenancy.yaml deletion-protection.yaml
var manifests embed.FS

// DeletionProtectionPolicy refuses deleting objects labelled
// resourcetemplate.karmada.io/deletion-protected: Always.
const DeletionProtectionPolicy = "atoll-deletion-protection"

// Names of the tenant-boundary policies (each has a binding of the same
// name).
const (
	TenantBoundaryPolicy = "atoll-tenant-boundaries"
	PolicyRecordsPolicy  = "atoll-policy-records"
)

// objects are every admission object atoll installs, in apply order (a
// policy before its binding).
func objects() ([]*unstructured.Unstructured, error) {
	policy, binding := Policies()
	var out []*unstructured.Unstructured
	for _, obj := range []any{policy, binding} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding admission policy: %w", err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	for _, file := range []string{"tenancy.yaml", "deletion-protection.yaml"} {
		data, err := manifests.ReadFile(file)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("decoding the admission policies of %s: %w", file, err)
			}
			if len(u.Object) > 0 {
				out = append(out, &u)
			}
		}
	}
	return out, nil
}

// Manifests returns the policies as YAML documents (for `atoll crds`).
func Manifests() ([][]byte, error) {
	objs, err := objects()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding admission policy %s: %w", obj.GetName(), err)
		}
		out = append(out, data)
	}
	return out, nil
}

// resources are the API resources of the admission kinds atoll installs.
var resources = map[string]string{
	"ValidatingAdmissionPolicy":        "validatingadmissionpolicies",
	"ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
	"MutatingAdmissionPolicy":          "mutatingadmissionpolicies",
	"MutatingAdmissionPolicyBinding":   "mutatingadmissionpolicybindings",
}

// Apply installs the policies with server-side apply.
func Apply(ctx context.Context, cfg *rest.Config) error {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	objs, err := objects()
	if err != nil {
		return err
	}
	opts := metav1.ApplyOptions{FieldManager: names.FieldManager, Force: true}
	for _, obj := range objs {
		resource, ok := resources[obj.GetKind()]
		if !ok {
			return fmt.Errorf("applying %s %s: not an admission kind", obj.GetKind(), obj.GetName())
		}
		gvr := admissionregistrationv1.SchemeGroupVersion.WithResource(resource)
		if _, err := client.Resource(gvr).Apply(ctx, obj.GetName(), obj, opts); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
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

// effectiveTimeout bounds WaitEffective.
const effectiveTimeout = 2 * time.Minute

// WaitEffective waits until the API server evaluates the tenancy policies.
// Right after the CRDs are installed (or the API server starts) its
// admission plugins cannot resolve the policies' paramKind ("failed to
// configure policy"), and the mutating one has no schema for the policy
// kinds yet ("Resource kind … not found", for up to its 5s refresh after
// the schema is published); with failurePolicy Fail every policy write is
// refused meanwhile. A dry-run PropagationPolicy creation, which passes
// the validating policy and the probe MutatingAdmissionPolicy (the same
// path as the records policy) once both work, tells when that is over.
//
// refresh, when not nil, is called (at most once a second) while the probe
// is refused: an embedded API server's admission plugins then read
// discovery again instead of at the API server's own reset, up to 30 s
// later (ControlPlane.RefreshAdmissionDiscovery).
func WaitEffective(ctx context.Context, cfg *rest.Config, refresh func() bool) error {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": policyv1alpha1.GroupVersion.String(), "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": "atoll-admission-probe", "namespace": metav1.NamespaceDefault},
		"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "atoll-admission-probe"}}},
	}}
	pps := client.Resource(policyv1alpha1.GroupVersion.WithResource("propagationpolicies")).Namespace(metav1.NamespaceDefault)
	var last error
	var refreshed time.Time
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, effectiveTimeout, true, func(ctx context.Context) (bool, error) {
		_, last = pps.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if last == nil || apierrors.IsAlreadyExists(last) {
			return true, nil
		}
		if refresh != nil && time.Since(refreshed) >= time.Second {
			refresh()
			refreshed = time.Now()
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("admission policies not effective after %s: %w", effectiveTimeout, last)
	}
	return nil
}
