package manager

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// binding builds a binding whose every string is its own copy, as a
// decoder makes them.
func binding(name string) *workv1alpha2.ResourceBinding {
	c := strings.Clone
	return &workv1alpha2.ResourceBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: c("work.karmada.io/v1alpha2"), Kind: c("ResourceBinding")},
		ObjectMeta: metav1.ObjectMeta{Name: c(name), Namespace: c("shop"),
			Labels: map[string]string{c(policyv1alpha1.PropagationPolicyPermanentIDLabel): c("pp-id"),
				c(workv1alpha2.ResourceBindingPermanentIDLabel): c("id-" + name)},
			Annotations:     map[string]string{c(policyv1alpha1.PropagationPolicyNameAnnotation): c("all")},
			Finalizers:      []string{c(workv1alpha2.CleanupFinalizer)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: c("apps/v1"), Kind: c("Deployment"), Name: c(name)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "atoll"}},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  workv1alpha2.ObjectReference{APIVersion: c("apps/v1"), Kind: c("Deployment"), Namespace: c("shop"), Name: c(name)},
			Clusters:  []workv1alpha2.TargetCluster{{Name: c("member1"), Replicas: 1}},
			Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{c("member1")}}},
		},
		Status: workv1alpha2.ResourceBindingStatus{
			Conditions: []metav1.Condition{{Type: c("Scheduled"), Status: metav1.ConditionTrue, Reason: c("Success"), Message: c("Binding has been scheduled successfully.")}},
			AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{ClusterName: c("member1"), Applied: true, Health: workv1alpha2.ResourceHealth(c("Healthy")),
				Status: &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)}}},
		},
	}
}

func sameData(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestBindingTransformChangesNothingButManagedFields(t *testing.T) {
	in := binding("web")
	want := in.DeepCopy()
	want.ManagedFields = nil
	out, err := bindingTransform(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("transformed binding (-want +got):\n%s", diff)
	}
}

func TestBindingTransformSharesRepeatedStrings(t *testing.T) {
	a, _ := bindingTransform(binding("web"))
	b, _ := bindingTransform(binding("db"))
	x, y := a.(*workv1alpha2.ResourceBinding), b.(*workv1alpha2.ResourceBinding)
	shared := map[string][2]string{
		"namespace":        {x.Namespace, y.Namespace},
		"policy id label":  {x.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], y.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]},
		"policy name":      {x.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation], y.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]},
		"resource kind":    {x.Spec.Resource.Kind, y.Spec.Resource.Kind},
		"cluster":          {x.Spec.Clusters[0].Name, y.Spec.Clusters[0].Name},
		"condition reason": {x.Status.Conditions[0].Reason, y.Status.Conditions[0].Reason},
		"message":          {x.Status.Conditions[0].Message, y.Status.Conditions[0].Message},
		"health":           {string(x.Status.AggregatedStatus[0].Health), string(y.Status.AggregatedStatus[0].Health)},
	}
	for what, s := range shared {
		if !sameData(s[0], s[1]) {
			t.Errorf("%s: not shared between bindings", what)
		}
	}
	var keyX, keyY string
	for k := range x.Labels {
		if k == policyv1alpha1.PropagationPolicyPermanentIDLabel {
			keyX = k
		}
	}
	for k := range y.Labels {
		if k == policyv1alpha1.PropagationPolicyPermanentIDLabel {
			keyY = k
		}
	}
	if !sameData(keyX, keyY) {
		t.Error("label keys not shared between bindings")
	}
	// A value unique to each binding is left as it is.
	if got := x.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]; got != "id-web" {
		t.Errorf("binding id label = %q", got)
	}
}

func TestBindingTransformLeavesOtherObjects(t *testing.T) {
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err := bindingTransform(p)
	if err != nil || out != p || len(p.ManagedFields) != 1 {
		t.Errorf("a policy was changed: %v %v", out, err)
	}
}
