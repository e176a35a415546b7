package manager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingjson"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/pkg/util/wire"
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
			Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
				PurgeMode: policyv1alpha1.PurgeMode(c("Graciously")), GracePeriodSeconds: new(int32(600))}},
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{Namespace: c("shop"),
				ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
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

// Bindings of one policy and one workload shape share their placement,
// failover behaviour and replica requirements; a binding whose differ keeps
// its own. A second pass over a transformed binding (client-go's streaming
// list runs the transform twice) changes nothing, while other goroutines
// read the shared parts (run with -race).
func TestBindingTransformSharesPolicyParts(t *testing.T) {
	first, _ := bindingTransform(binding("web"))
	x := first.(*workv1alpha2.ResourceBinding)
	other := binding("db")
	other.Spec.Placement.ClusterAffinity.ClusterNames = append(other.Spec.Placement.ClusterAffinity.ClusterNames, "member2")
	other.Spec.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("20m")
	otherFailover := other.Spec.Failover

	tests := []struct {
		name      string
		in        *workv1alpha2.ResourceBinding
		placement bool // shared with x
		failover  bool
		requires  bool
	}{
		{"same policy and shape", binding("api"), true, true, true},
		{"other placement and request", other, false, true, false},
		{"already transformed", x, true, true, true},
	}
	done := make(chan struct{})
	defer close(done)
	placement, failover, requires := x.Spec.Placement, x.Spec.Failover, x.Spec.ReplicaRequirements
	go func() { // a reader of what is shared, as controllers are
		for {
			select {
			case <-done:
				return
			default:
				_ = placement.ClusterAffinity.ClusterNames[0] + string(failover.Application.PurgeMode)
				_ = requires.ResourceRequest.Cpu().MilliValue()
			}
		}
	}()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.in.DeepCopy()
			want.ManagedFields = nil
			out, err := bindingTransform(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			y := out.(*workv1alpha2.ResourceBinding)
			if diff := cmp.Diff(want, y); diff != "" {
				t.Errorf("transformed binding (-want +got):\n%s", diff)
			}
			for what, same := range map[string][2]bool{
				"placement":            {y.Spec.Placement == placement, tt.placement},
				"failover":             {y.Spec.Failover == failover, tt.failover},
				"replica requirements": {y.Spec.ReplicaRequirements == requires, tt.requires},
			} {
				if same[0] != same[1] {
					t.Errorf("%s shared with the first binding: %v, want %v", what, same[0], same[1])
				}
			}
		})
	}
	if otherFailover == failover || other.Spec.Failover != failover {
		t.Error("an equal failover behaviour was not replaced by the shared one")
	}
}

func TestBindingTransformLeavesOtherObjects(t *testing.T) {
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err := bindingTransform(p)
	if err != nil || out != p || len(p.ManagedFields) != 1 {
		t.Errorf("a policy was changed: %v %v", out, err)
	}
}

// BenchmarkCachedBinding decodes a binding document as the manager cache's
// informer does (atoll's codec, then the transform) b.N times, keeps every
// copy, and reports what one costs to decode and to hold: the heap still
// in use after a collection, per binding. The documents are a Deployment's
// and a ConfigMap's binding from BenchmarkTemplates100k and a Deployment's
// under a production-shaped policy (12 weighted clusters, spread
// constraints, tolerations, failover). Run with -benchtime 20000x: fewer
// copies weigh the first one's shared parts more.
func BenchmarkCachedBinding(b *testing.B) {
	s, err := Scheme()
	if err != nil {
		b.Fatal(err)
	}
	dec := wire.NewTypedSerializer(s, bindingjson.Decode).Objects
	for _, doc := range []string{"deployment", "configmap", "weighted"} {
		data, err := os.ReadFile(filepath.Join("testdata", "binding-"+doc+".json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(doc, func(b *testing.B) {
			utiltesting.ReportHeldBytes(b, "held-bytes/binding", func() any {
				obj, _, err := dec.Decode(data, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				out, err := bindingTransform(obj)
				if err != nil {
					b.Fatal(err)
				}
				return out
			})
		})
	}
}
