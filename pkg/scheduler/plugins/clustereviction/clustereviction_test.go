package clustereviction

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestFilter(t *testing.T) {
	cases := map[string]struct {
		binding  *utiltesting.BindingWrapper
		cluster  string
		wantCode framework.Code
	}{
		"no eviction":              {binding: utiltesting.MakeBinding("web", "ns"), cluster: "m1", wantCode: framework.Success},
		"evicted from the cluster": {binding: utiltesting.MakeBinding("web", "ns").EvictionTask("m1"), cluster: "m1", wantCode: framework.Unschedulable},
		"evicted from another":     {binding: utiltesting.MakeBinding("web", "ns").EvictionTask("m2"), cluster: "m1", wantCode: framework.Success},
		"evicted from several": {
			binding: utiltesting.MakeBinding("web", "ns").EvictionTask("m2").EvictionTask("m1"), cluster: "m1",
			wantCode: framework.Unschedulable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			cluster := utiltesting.MakeCluster(tc.cluster).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, []*clusterv1alpha1.Cluster{cluster})
			st := ClusterEviction{}.Filter(context.Background(), sc, cluster)
			if st.Code() != tc.wantCode {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tc.wantCode)
			}
			if st.Code() == framework.Unschedulable && st.Message() != "cluster(s) were in the process of eviction" {
				t.Errorf("message = %q", st.Message())
			}
		})
	}
}
