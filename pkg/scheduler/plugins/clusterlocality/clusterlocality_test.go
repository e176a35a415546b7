package clusterlocality

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestScore(t *testing.T) {
	cases := map[string]struct {
		binding *utiltesting.BindingWrapper
		cluster string
		want    int64
	}{
		"not scheduled yet":          {binding: utiltesting.MakeBinding("web", "ns"), cluster: "m1", want: 0},
		"in the previous result":     {binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m0", 1).TargetCluster("m1", 2), cluster: "m1", want: 100},
		"not in the previous result": {binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m0", 1), cluster: "m1", want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			cluster := utiltesting.MakeCluster(tc.cluster).Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, []*clusterv1alpha1.Cluster{cluster})
			got, st := ClusterLocality{}.Score(context.Background(), sc, cluster)
			if !st.IsSuccess() {
				t.Fatalf("status %v", st.Message())
			}
			if got != tc.want {
				t.Errorf("score = %d, want %d", got, tc.want)
			}
		})
	}
}
