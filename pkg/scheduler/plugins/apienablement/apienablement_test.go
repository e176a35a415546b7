package apienablement

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestFilter(t *testing.T) {
	withApps := utiltesting.MakeCluster("m1").APIEnablement("v1", "ConfigMap").APIEnablement("apps/v1", "Deployment", "StatefulSet").Obj()
	withoutApps := utiltesting.MakeCluster("m1").APIEnablement("v1", "ConfigMap").APIEnablement("apps/v1beta1", "Deployment").Obj()
	incomplete := utiltesting.MakeCluster("m1").APIEnablement("v1", "ConfigMap").
		Condition(clusterv1alpha1.ClusterConditionCompleteAPIEnablements, metav1.ConditionFalse, "Partial").Obj()
	cases := map[string]struct {
		cluster     *clusterv1alpha1.Cluster
		binding     *utiltesting.BindingWrapper
		wantCode    framework.Code
		wantReasons []string
	}{
		"API listed": {
			cluster: withApps, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode: framework.Success,
		},
		"core API listed": {
			cluster: withApps, binding: utiltesting.MakeBinding("cfg", "ns").Resource("v1", "ConfigMap", "cfg"),
			wantCode: framework.Success,
		},
		"kind in another version only": {
			cluster: withoutApps, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) did not serve the API apps/v1 Deployment"},
		},
		"kind not listed in its version": {
			cluster: withApps, binding: utiltesting.MakeBinding("ds", "ns").Resource("apps/v1", "DaemonSet", "ds"),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) did not serve the API apps/v1 DaemonSet"},
		},
		"no API enablements reported yet": {
			cluster: utiltesting.MakeCluster("m1").Obj(), binding: utiltesting.MakeBinding("web", "ns"),
			wantCode: framework.Success,
		},
		"incomplete APIs keep a cluster of the previous result": {
			cluster: incomplete, binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m1", 2),
			wantCode: framework.Success,
		},
		"incomplete APIs do not attract new work": {
			cluster: incomplete, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) did not serve the API apps/v1 Deployment"},
		},
		"complete APIs without the kind drop a cluster of the previous result": {
			cluster: withoutApps, binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m1", 2),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) did not serve the API apps/v1 Deployment"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, []*clusterv1alpha1.Cluster{tc.cluster})
			st := APIEnablement{}.Filter(context.Background(), sc, tc.cluster)
			if st.Code() != tc.wantCode {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantReasons, st.Reasons()); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}
