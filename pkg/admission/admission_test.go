package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The embedded tenancy manifests decode strictly into the API types the
// API server serves, so a typo in a field name fails here, not at start-up.
func TestObjects(t *testing.T) {
	objs, err := objects()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
		if _, ok := resources[o.GetKind()]; !ok {
			t.Errorf("%s has no resource to be applied to", o.GetKind())
		}
		var typed runtime.Object
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			typed = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		case "ValidatingAdmissionPolicyBinding":
			typed = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		case "MutatingAdmissionPolicy":
			typed = &admissionregistrationv1.MutatingAdmissionPolicy{}
		case "MutatingAdmissionPolicyBinding":
			typed = &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
		default:
			t.Fatalf("unexpected kind %s", o.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, typed, true); err != nil {
			t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	want := []string{
		"ValidatingAdmissionPolicy/" + BindingScopePolicy, "ValidatingAdmissionPolicyBinding/" + BindingScopePolicy,
		"MutatingAdmissionPolicy/" + PolicyRecordsPolicy, "MutatingAdmissionPolicyBinding/" + PolicyRecordsPolicy,
		"ValidatingAdmissionPolicy/" + TenantBoundaryPolicy, "ValidatingAdmissionPolicyBinding/" + TenantBoundaryPolicy,
		"MutatingAdmissionPolicy/atoll-admission-probe", "MutatingAdmissionPolicyBinding/atoll-admission-probe",
		"ValidatingAdmissionPolicy/" + DeletionProtectionPolicy, "ValidatingAdmissionPolicyBinding/" + DeletionProtectionPolicy,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
