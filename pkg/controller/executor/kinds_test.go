package executor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// The metadata the executor writes must map member events back to exactly
// the binding that wrote it, for both kinds.
func TestOwnerMetadataRoundTrip(t *testing.T) {
	cases := map[string]struct {
		kind      kind
		binding   *metav1.ObjectMeta
		wantKey   types.NamespacedName
		wantLabel string
	}{
		"ResourceBinding": {
			kind:      namespacedKind,
			binding:   &metav1.ObjectMeta{Namespace: "demo", Name: "nginx-deployment", Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"}},
			wantKey:   types.NamespacedName{Namespace: "demo", Name: "nginx-deployment"},
			wantLabel: workv1alpha2.ResourceBindingPermanentIDLabel,
		},
		"ClusterResourceBinding": {
			kind:      clusterKind,
			binding:   &metav1.ObjectMeta{Name: "admin-clusterrole", Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id-2"}},
			wantKey:   types.NamespacedName{Name: "admin-clusterrole"},
			wantLabel: workv1alpha2.ClusterResourceBindingPermanentIDLabel,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := tc.kind.NewObject()
			obj.SetNamespace(tc.binding.Namespace)
			obj.SetName(tc.binding.Name)
			obj.SetLabels(tc.binding.Labels)
			labels, annotations := tc.kind.ownerMetadata(obj)
			if labels[workv1alpha2.ManagedLabel] != "true" || labels[tc.wantLabel] == "" {
				t.Errorf("labels %v lack the managed label or the permanent id", labels)
			}
			got, ok := tc.kind.owns(annotations)
			if !ok {
				t.Fatalf("owns(%v) = false", annotations)
			}
			if diff := cmp.Diff(tc.wantKey, got); diff != "" {
				t.Errorf("owner (-want +got):\n%s", diff)
			}
			// The other kind must not claim it.
			other := clusterKind
			if tc.kind.clusterScoped() {
				other = namespacedKind
			}
			if _, ok := other.owns(annotations); ok {
				t.Errorf("%s also claims %v", other.name(), annotations)
			}
		})
	}
}

func TestSuspendedOn(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Suspension: &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{
		DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}},
	}}}
	if suspendedOn(spec, "member1") || !suspendedOn(spec, "member2") {
		t.Error("dispatchingOnClusters must suspend exactly the listed clusters")
	}
	if suspendedOn(&workv1alpha2.ResourceBindingSpec{}, "member1") {
		t.Error("no suspension suspends nothing")
	}
}

func TestSameStatusValue(t *testing.T) {
	cases := map[string]struct {
		have, want any
		same       bool
	}{
		"omitted zero equals 0":    {nil, int64(0), true},
		"omitted is not 3":         {nil, int64(3), false},
		"json float equals int":    {float64(4), int64(4), true},
		"different counts":         {int64(4), int64(5), false},
		"equal observedGeneration": {int64(7), int64(7), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sameStatusValue(tc.have, tc.want); got != tc.same {
				t.Errorf("sameStatusValue(%v, %v) = %v, want %v", tc.have, tc.want, got, tc.same)
			}
		})
	}
}
