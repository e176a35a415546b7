package plugins

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// TestInTreeFramework schedules with every in-tree plugin, as the
// controller does.
func TestInTreeFramework(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{
		utiltesting.MakeCluster("m1").Label("env", "prod").Region("east").Obj(),
		utiltesting.MakeCluster("m2").Label("env", "prod").Region("west").Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).Obj(),
		utiltesting.MakeCluster("m3").Label("env", "dev").Region("east").APIEnablement("v1", "ConfigMap").Obj(),
	}
	cases := map[string]struct {
		binding          *utiltesting.BindingWrapper
		want             []workv1alpha2.TargetCluster
		wantAffinityName string
		wantFitErr       string
		wantErr          bool
	}{
		"nil placement: every usable cluster, Duplicated": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(2),
			// m2 is tainted, m3 does not serve apps/v1.
			want: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}},
		},
		"tainted cluster of the previous result stays": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(2).TargetCluster("m2", 2),
			want:    []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 2}},
		},
		"divided over the clusters the affinity selects": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(5).
				Placement(utiltesting.MakePlacement().FieldRequirement("region", corev1.NodeSelectorOpIn, "east").
					Toleration(corev1.Toleration{Operator: corev1.TolerationOpExists}).Divided("").Obj()).
				Resource("v1", "ConfigMap", "web"),
			want: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m3", Replicas: 2}},
		},
		"clusterAffinities: first term, recorded": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).
				Placement(utiltesting.MakePlacement().
					AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).
					AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m3"}}).Obj()),
			want:             []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
			wantAffinityName: "primary",
		},
		"nothing fits": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).
				Placement(utiltesting.MakePlacement().MatchLabels(map[string]string{"env": "prod"}).Exclude("m1").Obj()),
			wantFitErr: "0/3 clusters are available: 2 cluster(s) did not match clusterAffinity, 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}.",
		},
		"evicted and API-less clusters": {
			binding:    utiltesting.MakeBinding("web", "ns").Replicas(1).EvictionTask("m1"),
			wantFitErr: "0/3 clusters are available: 1 cluster(s) did not serve the API apps/v1 Deployment, 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}, 1 cluster(s) were in the process of eviction.",
		},
		"unsupported placement is an error, not a fit error": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			wantErr: true,
		},
	}
	fw, err := framework.New(NewInTreeRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, clusters)
			res, err := fw.Schedule(context.Background(), sc)
			var fitErr *framework.FitError
			switch {
			case tc.wantFitErr != "":
				if !errors.As(err, &fitErr) {
					t.Fatalf("err = %v, want a FitError", err)
				}
				if err.Error() != tc.wantFitErr {
					t.Errorf("message:\n got %s\nwant %s", err.Error(), tc.wantFitErr)
				}
				return
			case tc.wantErr:
				if err == nil || errors.As(err, &fitErr) {
					t.Fatalf("err = %v, want a scheduler error", err)
				}
				return
			case err != nil:
				t.Fatalf("Schedule: %v", err)
			}
			if diff := cmp.Diff(tc.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if res.AffinityName != tc.wantAffinityName {
				t.Errorf("affinity name %q, want %q", res.AffinityName, tc.wantAffinityName)
			}
		})
	}
}
