package tenantboundary

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestFilter(t *testing.T) {
	only1 := func(c *clusterv1alpha1.Cluster) bool { return c.Name == "member1" }
	cases := map[string]struct {
		tenant     *framework.TenantBoundary
		cluster    string
		wantCode   framework.Code
		wantReason string
	}{
		"unbounded":         {cluster: "member2"},
		"inside":            {tenant: &framework.TenantBoundary{Tenant: "team-a", Allows: only1}, cluster: "member1"},
		"outside":           {tenant: &framework.TenantBoundary{Tenant: "team-a", Allows: only1}, cluster: "member2", wantCode: framework.Unschedulable, wantReason: "cluster(s) outside tenant team-a's cluster set"},
		"closed boundaries": {tenant: &framework.TenantBoundary{Reason: "no record", Allows: func(*clusterv1alpha1.Cluster) bool { return false }}, cluster: "member1", wantCode: framework.Unschedulable, wantReason: "cluster(s) closed to the policy: no record"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := utiltesting.MakeBinding("web", "team-a").Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Kind: "ResourceBinding", Namespace: b.Namespace, Name: b.Name, Spec: &b.Spec, Status: &b.Status}, nil)
			sc.Tenant = tc.tenant
			st := TenantBoundary{}.Filter(context.Background(), sc, utiltesting.MakeCluster(tc.cluster).Obj())
			if st.Code() != tc.wantCode || st.Message() != tc.wantReason {
				t.Errorf("got %s %q, want %s %q", st.Code(), st.Message(), tc.wantCode, tc.wantReason)
			}
		})
	}
}
