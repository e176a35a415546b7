package dependencies

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestUpsertAndClusters(t *testing.T) {
	snap := func(name string, clusters ...string) workv1alpha2.BindingSnapshot {
		s := workv1alpha2.BindingSnapshot{Namespace: "ns", Name: name}
		for _, c := range clusters {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: c})
		}
		return s
	}
	cases := map[string]struct {
		list         []workv1alpha2.BindingSnapshot
		add          workv1alpha2.BindingSnapshot
		wantList     []workv1alpha2.BindingSnapshot
		wantClusters []workv1alpha2.TargetCluster
	}{
		"first requirer": {
			add:          snap("a", "m1"),
			wantList:     []workv1alpha2.BindingSnapshot{snap("a", "m1")},
			wantClusters: []workv1alpha2.TargetCluster{{Name: "m1"}},
		},
		"second requirer is sorted in and clusters are the union": {
			list:         []workv1alpha2.BindingSnapshot{snap("b", "m2")},
			add:          snap("a", "m1", "m2"),
			wantList:     []workv1alpha2.BindingSnapshot{snap("a", "m1", "m2"), snap("b", "m2")},
			wantClusters: []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}},
		},
		"requirer moves": {
			list:         []workv1alpha2.BindingSnapshot{snap("a", "m1"), snap("b", "m1")},
			add:          snap("a", "m2"),
			wantList:     []workv1alpha2.BindingSnapshot{snap("a", "m2"), snap("b", "m1")},
			wantClusters: []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}},
		},
		"unscheduled requirer": {
			add:      snap("a"),
			wantList: []workv1alpha2.BindingSnapshot{snap("a")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := upsert(tc.list, tc.add)
			if diff := cmp.Diff(tc.wantList, got); diff != "" {
				t.Errorf("upsert (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantClusters, clustersOf(got)); diff != "" {
				t.Errorf("clustersOf (-want +got):\n%s", diff)
			}
		})
	}
}
