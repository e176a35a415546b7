package plugins

import (
	"cmp"
	"context"
	"errors"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

type rl = map[corev1.ResourceName]string

// TestInTreeFramework schedules with every in-tree plugin, as the
// controller does.
func TestInTreeFramework(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	clusters := []*clusterv1alpha1.Cluster{
		utiltesting.MakeCluster("m1").Label("env", "prod").Region("east").ResourceSummary(rl{"cpu": "1"}, nil).Obj(),
		utiltesting.MakeCluster("m2").Label("env", "prod").Region("west").Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).ResourceSummary(rl{"cpu": "3"}, nil).Obj(),
		utiltesting.MakeCluster("m3").Label("env", "dev").Region("east").APIEnablement("v1", "ConfigMap").Obj(),
	}
	cases := map[string]struct {
		binding          *utiltesting.BindingWrapper
		want             []workv1alpha2.TargetCluster
		wantAffinityName string
		wantFitErr       string
		wantReason       string
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
		"clusterAffinities: first term without a usable cluster falls to the second": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).
				Placement(utiltesting.MakePlacement().
					AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}).
					AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).Obj()),
			want:             []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
			wantAffinityName: "backup",
		},
		"clusterAffinities: start from the observed term": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).ObservedAffinityName("backup").
				Placement(utiltesting.MakePlacement().
					AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).
					AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}).Obj()),
			want:             []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
			wantAffinityName: "backup",
		},
		"clusterAffinities: a fresh reschedule starts from the first term": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).ObservedAffinityName("backup").
				LastScheduledTime(t0).RescheduleTriggeredAt(t1).
				Placement(utiltesting.MakePlacement().
					AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).
					AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}).Obj()),
			want:             []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
			wantAffinityName: "primary",
		},
		"clusterAffinities: a term without enough capacity falls to the next": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(4).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().DynamicWeight().
					Toleration(corev1.Toleration{Operator: corev1.TolerationOpExists}).
					AffinityTerm("small", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).
					AffinityTerm("all", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}).Obj()),
			want:             []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}, {Name: "m2", Replicas: 3}},
			wantAffinityName: "all",
		},
		"clusterAffinities: no term fits": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).
				Placement(utiltesting.MakePlacement().
					AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}).
					AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m3"}}).Obj()),
			wantFitErr:       `no clusterAffinities term fits: term "primary": 0/3 clusters are available: 2 cluster(s) did not match clusterAffinities term "primary", 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}; term "backup": 0/3 clusters are available: 2 cluster(s) did not match clusterAffinities term "backup", 1 cluster(s) did not serve the API apps/v1 Deployment.`,
			wantAffinityName: "primary",
		},
		"spread by region with static weights: selection first, then division": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(6).Resource("v1", "ConfigMap", "web").
				Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{Operator: corev1.TolerationOpExists}).
					ClusterWeight("m1", 1).ClusterWeight("m2", 2).ClusterWeight("m3", 3).
					SpreadBy(policyv1alpha1.SpreadByFieldRegion, 1, 1).Obj()),
			// east (m1, m3) ranks first by name; west's m2 is left out.
			want: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m3", Replicas: 4}},
		},
		"spread by region minGroups 3: unschedulable": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).Resource("v1", "ConfigMap", "web").
				Placement(utiltesting.MakePlacement().Toleration(corev1.Toleration{Operator: corev1.TolerationOpExists}).
					SpreadBy(policyv1alpha1.SpreadByFieldRegion, 3, 0).Obj()),
			wantFitErr: "3/3 clusters are available: SpreadConstraint: spread constraint region: minGroups 3 but only 2 regions have feasible clusters.",
			wantReason: "Unschedulable",
		},
		"dynamic weights: not enough available replicas": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(5).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			wantFitErr: "1/3 clusters are available: 1 cluster(s) did not serve the API apps/v1 Deployment, 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}; ReplicaAssignment: clusters have 1 available replicas in total, 5 needed.",
			wantReason: "Unschedulable",
		},
		"invalid placement is an error, not a fit error": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).Placement(func() *policyv1alpha1.Placement {
				p := utiltesting.MakePlacement().DynamicWeight().Obj()
				p.ReplicaScheduling.WeightPreference.DynamicWeight = "Magic"
				return p
			}()),
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
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec, Status: &b.Status}, clusters)
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
				if want := cmp.Or(tc.wantReason, "NoClusterFit"); fitErr.Reason() != want {
					t.Errorf("reason %s, want %s", fitErr.Reason(), want)
				}
				if sc.AffinityName != tc.wantAffinityName {
					t.Errorf("affinity name %q, want %q", sc.AffinityName, tc.wantAffinityName)
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
			if diff := gocmp.Diff(tc.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if res.AffinityName != tc.wantAffinityName {
				t.Errorf("affinity name %q, want %q", res.AffinityName, tc.wantAffinityName)
			}
		})
	}
}
