package semantic

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestEqualAsSemantic(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	cpu := func(s string) workv1alpha2.ResourceBindingSpec {
		return workv1alpha2.ResourceBindingSpec{ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}}}
	}
	cases := map[string]struct {
		a, b any
		want bool
	}{
		"identical":                   {cpu("1"), cpu("1"), true},
		"same quantity written apart": {cpu("1"), cpu("1000m"), true},
		"different quantity":          {cpu("1"), cpu("2"), false},
		"same instant, other zone": {
			metav1.NewTime(at), metav1.NewTime(at.In(time.FixedZone("x", 3600))), true},
		"nil and empty slices": {
			workv1alpha2.ResourceBindingSpec{Clusters: nil}, workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{}}, true},
		"different clusters": {
			workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "a"}}},
			workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "b"}}}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Equal(tc.a, tc.b); got != tc.want {
				t.Errorf("Equal = %v, want %v", got, tc.want)
			}
		})
	}
}
