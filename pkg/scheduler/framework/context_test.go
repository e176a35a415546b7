package framework_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestNewSchedulingContext(t *testing.T) {
	cases := map[string]struct {
		placement        *policyv1alpha1.Placement
		wantAffinity     *policyv1alpha1.ClusterAffinity
		wantAffinityName string
	}{
		"no placement": {},
		"clusterAffinity": {
			placement:    utiltesting.MakePlacement().ClusterNames("m1").Obj(),
			wantAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}},
		},
		"clusterAffinities: the first term": {
			placement: utiltesting.MakePlacement().
				AffinityTerm("primary", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}).
				AffinityTerm("backup", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}).Obj(),
			wantAffinity:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}},
			wantAffinityName: "primary",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := utiltesting.MakeBinding("web", "ns").Placement(tc.placement).TargetCluster("m1", 2).EvictionTask("m3").Obj()
			sc := framework.NewSchedulingContext(&framework.BindingView{Spec: &b.Spec}, nil)
			if sc.Placement == nil || sc.Binding.Status == nil {
				t.Fatal("placement and status must never be nil")
			}
			if diff := cmp.Diff(tc.wantAffinity, sc.ClusterAffinity); diff != "" {
				t.Errorf("affinity (-want +got):\n%s", diff)
			}
			if sc.AffinityName != tc.wantAffinityName {
				t.Errorf("affinity name %q, want %q", sc.AffinityName, tc.wantAffinityName)
			}
			if !sc.PreviouslyScheduled("m1") || sc.PreviouslyScheduled("m3") {
				t.Error("PreviouslyScheduled must follow spec.clusters")
			}
			if !sc.Evicting("m3") || sc.Evicting("m1") {
				t.Error("Evicting must follow gracefulEvictionTasks")
			}
		})
	}
}

func TestPlacementDefaults(t *testing.T) {
	cases := map[string]struct {
		placement      *policyv1alpha1.Placement
		wantType       policyv1alpha1.ReplicaSchedulingType
		wantPreference policyv1alpha1.ReplicaDivisionPreference
		wantStatic     bool
	}{
		"nil placement":        {wantType: "Duplicated", wantPreference: "Weighted"},
		"no replicaScheduling": {placement: utiltesting.MakePlacement().Obj(), wantType: "Duplicated", wantPreference: "Weighted"},
		"empty type is Divided": {
			placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}},
			wantType:  "Divided", wantPreference: "Weighted", wantStatic: true,
		},
		"static weights": {
			placement: utiltesting.MakePlacement().ClusterWeight("m1", 1).Obj(),
			wantType:  "Divided", wantPreference: "Weighted", wantStatic: true,
		},
		"dynamic weights": {
			placement: utiltesting.MakePlacement().DynamicWeight().Obj(),
			wantType:  "Divided", wantPreference: "Weighted",
		},
		"aggregated": {
			placement: utiltesting.MakePlacement().Divided("Aggregated").Obj(),
			wantType:  "Divided", wantPreference: "Aggregated",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := framework.ReplicaSchedulingType(tc.placement); got != tc.wantType {
				t.Errorf("type %s, want %s", got, tc.wantType)
			}
			if got := framework.DivisionPreference(tc.placement); got != tc.wantPreference {
				t.Errorf("preference %s, want %s", got, tc.wantPreference)
			}
			if got := framework.IsStaticWeighted(tc.placement); got != tc.wantStatic {
				t.Errorf("static %v, want %v", got, tc.wantStatic)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	cases := map[string]struct {
		selection []string
		want      bool
	}{
		"nil":              {want: true},
		"star":             {selection: []string{"*"}, want: true},
		"named":            {selection: []string{"P"}, want: true},
		"other named":      {selection: []string{"Q"}},
		"star, disabled":   {selection: []string{"*", "-P"}},
		"disabled, star":   {selection: []string{"-P", "*"}},
		"star, other gone": {selection: []string{"*", "-Q"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := framework.Enabled("P", tc.selection); got != tc.want {
				t.Errorf("Enabled = %v, want %v", got, tc.want)
			}
		})
	}
}
