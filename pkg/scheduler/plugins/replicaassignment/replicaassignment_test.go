package replicaassignment

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func targets(kv ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(kv); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
	}
	return out
}

type rl = map[corev1.ResourceName]string

func TestAssign(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{
		utiltesting.MakeCluster("m1").ResourceSummary(rl{"cpu": "2"}, nil).Obj(),
		utiltesting.MakeCluster("m2").ResourceSummary(rl{"cpu": "8"}, rl{"cpu": "4"}).Obj(),
		utiltesting.MakeCluster("m3").ResourceSummary(rl{"cpu": "6"}, nil).Obj(),
	}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	weighted321 := utiltesting.MakePlacement().ClusterWeight("m1", 3).ClusterWeight("m2", 2).ClusterWeight("m3", 1).Obj()
	cases := map[string]struct {
		binding  *utiltesting.BindingWrapper
		want     []workv1alpha2.TargetCluster
		wantCode framework.Code
		wantMsg  string
	}{
		"nil placement: Duplicated": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(3),
			want:    targets("m1", 3, "m2", 3, "m3", 3),
		},
		"nil replicaScheduling: Duplicated": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(2).Placement(utiltesting.MakePlacement().ClusterNames("m1", "m2", "m3").Obj()),
			want:    targets("m1", 2, "m2", 2, "m3", 2),
		},
		"Duplicated": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(4).Placement(utiltesting.MakePlacement().Duplicated().Obj()),
			want:    targets("m1", 4, "m2", 4, "m3", 4),
		},
		"non-workload: every cluster without replicas": {
			binding: utiltesting.MakeBinding("cfg", "ns").Resource("v1", "ConfigMap", "cfg").Placement(weighted321),
			want:    targets("m1", 0, "m2", 0, "m3", 0),
		},
		"Divided 12 at 3:2:1": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(12).Placement(weighted321),
			want:    targets("m1", 6, "m2", 4, "m3", 2),
		},
		"Divided without preference: Weighted, equal weights": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(7).Placement(utiltesting.MakePlacement().Divided("").Obj()),
			want:    targets("m1", 3, "m2", 2, "m3", 2),
		},
		"Divided drops clusters left with 0 replicas": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(1).Placement(weighted321),
			want:    targets("m1", 1),
		},
		"spread constraints are the SpreadConstraint plugin's: assignment uses the clusters it is given": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(12).Placement(func() *policyv1alpha1.Placement {
				p := weighted321.DeepCopy()
				p.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1}}
				return p
			}()),
			want: targets("m1", 6, "m2", 4, "m3", 2),
		},
		"Aggregated: fewest clusters by available replicas": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(5).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().Divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated).Obj()),
			want: targets("m3", 5),
		},
		"Aggregated: more than the largest cluster": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(8).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().Divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated).Obj()),
			want: targets("m2", 3, "m3", 5),
		},
		"dynamic weights: available 2/4/6 (cpu 1 per replica), 6 replicas": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(6).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			want: targets("m1", 1, "m2", 2, "m3", 3),
		},
		"dynamic weights, steady scale up onto the previous result": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(9).ResourceRequest(rl{"cpu": "1"}).
				TargetCluster("m1", 3).Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			want: targets("m1", 4, "m2", 2, "m3", 3),
		},
		"dynamic weights, fresh after rescheduleTriggeredAt": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(6).ResourceRequest(rl{"cpu": "1"}).
				TargetCluster("m1", 6).LastScheduledTime(t0).RescheduleTriggeredAt(t1).
				Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			// weights 2+6, 4, 6
			want: targets("m1", 3, "m2", 1, "m3", 2),
		},
		"dynamic weights: not enough capacity": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(13).ResourceRequest(rl{"cpu": "1"}).
				Placement(utiltesting.MakePlacement().DynamicWeight().Obj()),
			wantCode: framework.Unschedulable,
			wantMsg:  "clusters have 12 available replicas in total, 13 needed",
		},
		"unknown dynamicWeight": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(3).Placement(func() *policyv1alpha1.Placement {
				p := utiltesting.MakePlacement().DynamicWeight().Obj()
				p.ReplicaScheduling.WeightPreference.DynamicWeight = "Magic"
				return p
			}()),
			wantCode: framework.Error,
			wantMsg:  `unknown weightPreference.dynamicWeight "Magic"`,
		},
		"the defaulted spread constraint is harmless": {
			binding: utiltesting.MakeBinding("web", "ns").Replicas(3).Placement(utiltesting.MakePlacement().Duplicated().
				SpreadConstraint(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1}).Obj()),
			want: targets("m1", 3, "m2", 3, "m3", 3),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.binding.Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec, Status: &b.Status}, clusters)
			got, st := ReplicaAssignment{}.Assign(context.Background(), sc, clusters)
			if st.Code() != tc.wantCode {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tc.wantCode)
			}
			if st.Message() != tc.wantMsg {
				t.Errorf("message = %q, want %q", st.Message(), tc.wantMsg)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}
