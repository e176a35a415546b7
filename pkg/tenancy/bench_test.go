package tenancy

import (
	"fmt"
	"testing"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
)

// BenchmarkBoundary is what the detector adds to each template it
// reconciles, and the executor to each sync with OverridePolicies: index
// the Tenants, find a policy's boundary and ask whether it holds the
// template (in a shared namespace, the label match).
func BenchmarkBoundary(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			tenants := make([]tenancyv1alpha1.Tenant, n)
			for i := range tenants {
				name := fmt.Sprintf("team-%d", i)
				tenants[i] = tenant(name, []string{name, "shared"}, policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
					map[string]string{"team": name})
			}
			labels := map[string]string{"team": "team-1", "app": "web"}
			annotations := map[string]string{tenancyv1alpha1.TenantAnnotation: "team-1"}
			b.ReportAllocs()
			for b.Loop() {
				s := NewSet(tenants)
				if s.Empty() {
					continue
				}
				s.ForPolicy("shared", annotations).OwnsTemplate("shared", labels)
			}
		})
	}
}
