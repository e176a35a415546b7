package scheduler

import (
	"testing"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/tainttoleration"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/tenantboundary"
)

func TestDeselected(t *testing.T) {
	rejected := func(byPlugin map[string]string) *framework.FitError {
		d := framework.Diagnosis{ClusterToStatus: map[string]*framework.Status{}}
		for cluster, plugin := range byPlugin {
			d.ClusterToStatus[cluster] = framework.NewStatus(framework.Unschedulable, "x").WithPlugin(plugin)
		}
		return &framework.FitError{NumAllClusters: 3, Diagnosis: d}
	}
	placed := []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"affinity left both":         {rejected(map[string]string{"m1": clusteraffinity.Name, "m2": tenantboundary.Name}), true},
		"one placed cluster tainted": {rejected(map[string]string{"m1": clusteraffinity.Name, "m2": tainttoleration.Name}), false},
		"one placed cluster passed":  {rejected(map[string]string{"m1": clusteraffinity.Name}), false},
		"every term deselects": {&framework.TermsFitError{Terms: []string{"a", "b"}, Errors: []*framework.FitError{
			rejected(map[string]string{"m1": clusteraffinity.Name, "m2": clusteraffinity.Name}),
			rejected(map[string]string{"m1": clusteraffinity.Name, "m2": clusteraffinity.Name})}}, true},
		"a term still selects one": {&framework.TermsFitError{Terms: []string{"a", "b"}, Errors: []*framework.FitError{
			rejected(map[string]string{"m1": clusteraffinity.Name, "m2": clusteraffinity.Name}),
			rejected(map[string]string{"m1": clusteraffinity.Name, "m2": tainttoleration.Name})}}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := deselected(tc.err, placed); got != tc.want {
				t.Fatalf("deselected = %v, want %v", got, tc.want)
			}
		})
	}
}
