package division

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
)

// StaticWeights are the clusters' weights under pref, as Karmada's
// getStaticWeightInfoList computes them: a cluster weighs the largest
// weight of the staticWeightList rules whose targetCluster matches it;
// clusters left at 0 are dropped; when no cluster has a weight (or pref is
// nil, or has no rules) every cluster weighs 1. The order of clusters is
// kept.
func StaticWeights(clusters []*clusterv1alpha1.Cluster, pref *policyv1alpha1.ClusterPreferences) ([]ClusterWeight, error) {
	var weights []ClusterWeight
	if pref != nil {
		for _, c := range clusters {
			var w int64
			for i := range pref.StaticWeightList {
				rule := &pref.StaticWeightList[i]
				ok, err := clusteraffinity.Matches(c, &rule.TargetCluster)
				if err != nil {
					return nil, fmt.Errorf("staticWeightList[%d].targetCluster: %w", i, err)
				}
				if ok {
					w = max(w, rule.Weight)
				}
			}
			if w > 0 {
				weights = append(weights, ClusterWeight{Name: c.Name, Weight: w})
			}
		}
	}
	if len(weights) == 0 {
		weights = make([]ClusterWeight, len(clusters))
		for i, c := range clusters {
			weights[i] = ClusterWeight{Name: c.Name, Weight: 1}
		}
	}
	return weights, nil
}

// ByStaticWeights divides replicas over clusters by their static weights
// (StaticWeights, then Webster with the tie-break of the resource uid).
// The result is sorted by name and includes clusters that got 0 replicas
// but had a weight.
func ByStaticWeights(replicas int32, clusters []*clusterv1alpha1.Cluster, pref *policyv1alpha1.ClusterPreferences, uid types.UID) ([]workv1alpha2.TargetCluster, error) {
	weights, err := StaticWeights(clusters, pref)
	if err != nil {
		return nil, err
	}
	return Webster(replicas, weights, NameOrderForUID(uid)), nil
}
