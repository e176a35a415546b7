package tainttoleration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestFilter(t *testing.T) {
	unreachable := utiltesting.MakeCluster("m1").Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).Obj()
	dedicated := utiltesting.MakeCluster("m1").Taint("dedicated", "gpu", corev1.TaintEffectNoExecute).Obj()
	soft := utiltesting.MakeCluster("m1").Taint("soft", "", corev1.TaintEffectPreferNoSchedule).Obj()
	cases := map[string]struct {
		cluster     *clusterv1alpha1.Cluster
		binding     *utiltesting.BindingWrapper
		wantCode    framework.Code
		wantReasons []string
	}{
		"no taints": {
			cluster: utiltesting.MakeCluster("m1").Obj(), binding: utiltesting.MakeBinding("web", "ns"),
			wantCode: framework.Success,
		},
		"untolerated NoSchedule": {
			cluster: unreachable, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}"},
		},
		"untolerated NoSchedule on a cluster of the previous result is kept": {
			cluster: unreachable, binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m1", 1),
			wantCode: framework.Success,
		},
		"NoSchedule tolerated by key with Exists": {
			cluster: unreachable,
			binding: utiltesting.MakeBinding("web", "ns").Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{
				Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
			}).Obj()),
			wantCode: framework.Success,
		},
		"toleration for another effect does not tolerate": {
			cluster: unreachable,
			binding: utiltesting.MakeBinding("web", "ns").Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{
				Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
			}).Obj()),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}"},
		},
		"untolerated NoExecute": {
			cluster: dedicated, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) had untolerated taint {dedicated=gpu: NoExecute}"},
		},
		"untolerated NoExecute leaves a cluster of the previous result to failover": {
			cluster: dedicated, binding: utiltesting.MakeBinding("web", "ns").TargetCluster("m1", 1),
		},
		"NoExecute tolerated by key and value with Equal": {
			cluster: dedicated,
			binding: utiltesting.MakeBinding("web", "ns").Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{
				Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu",
			}).Obj()),
			wantCode: framework.Success,
		},
		"Equal with another value does not tolerate": {
			cluster: dedicated,
			binding: utiltesting.MakeBinding("web", "ns").Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{
				Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cpu",
			}).Obj()),
			wantCode:    framework.Unschedulable,
			wantReasons: []string{"cluster(s) had untolerated taint {dedicated=gpu: NoExecute}"},
		},
		"empty key with Exists tolerates everything": {
			cluster: dedicated,
			binding: utiltesting.MakeBinding("web", "ns").Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{
				Operator: corev1.TolerationOpExists,
			}).Obj()),
			wantCode: framework.Success,
		},
		"PreferNoSchedule is ignored": {
			cluster: soft, binding: utiltesting.MakeBinding("web", "ns"),
			wantCode: framework.Success,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, []*clusterv1alpha1.Cluster{tc.cluster})
			st := TaintToleration{}.Filter(context.Background(), sc, tc.cluster)
			if st.Code() != tc.wantCode {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantReasons, st.Reasons()); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}
