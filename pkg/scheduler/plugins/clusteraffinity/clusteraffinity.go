// Package clusteraffinity is the ClusterAffinity filter: it keeps the
// clusters the placement's cluster affinity selects. Matches is the one
// implementation of ClusterAffinity matching in the scheduler; static
// weight rules use it too.
package clusteraffinity

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ClusterAffinity"

// The cluster fields a fieldSelector can use.
const (
	ProviderField = "provider"
	RegionField   = "region"
	ZoneField     = "zone"
)

// ClusterAffinity filters clusters by the attempt's cluster affinity
// (SchedulingContext.ClusterAffinity).
type ClusterAffinity struct{}

var _ framework.FilterPlugin = ClusterAffinity{}

// New builds the plugin.
func New() (framework.Plugin, error) { return ClusterAffinity{}, nil }

// Name returns the plugin name.
func (ClusterAffinity) Name() string { return Name }

// Filter rejects clusters the affinity does not select.
func (ClusterAffinity) Filter(_ context.Context, sc *framework.SchedulingContext, cluster *clusterv1alpha1.Cluster) *framework.Status {
	if sc.ClusterAffinity == nil {
		return nil
	}
	ok, err := Matches(cluster, sc.ClusterAffinity)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("placement cluster affinity: %w", err))
	}
	if ok {
		return nil
	}
	if sc.AffinityName != "" {
		return framework.NewStatus(framework.Unschedulable,
			fmt.Sprintf("cluster(s) did not match clusterAffinities term %q", sc.AffinityName))
	}
	return framework.NewStatus(framework.Unschedulable, "cluster(s) did not match clusterAffinity")
}

// Matches reports whether affinity selects cluster. Every part that is set
// must match: exclude (never selected), labelSelector, fieldSelector and
// clusterNames. An empty affinity selects every cluster.
//
// fieldSelector requirements use the keys provider, region and zone with
// the operators In and NotIn. provider and region follow label selector
// semantics (NotIn matches a cluster without the field). The zones of a
// cluster are spec.zones, or the deprecated spec.zone when zones is empty;
// as in Karmada, In matches when the cluster has zones and all of them are
// in the values, NotIn when none of them is.
//
// An invalid selector is an error, not a mismatch, so users see it.
func Matches(cluster *clusterv1alpha1.Cluster, affinity *policyv1alpha1.ClusterAffinity) (bool, error) {
	if affinity == nil {
		return true, nil
	}
	if slices.Contains(affinity.ExcludeClusters, cluster.Name) {
		return false, nil
	}
	if affinity.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil {
			return false, fmt.Errorf("labelSelector: %w", err)
		}
		if !s.Matches(labels.Set(cluster.Labels)) {
			return false, nil
		}
	}
	if affinity.FieldSelector != nil {
		for i := range affinity.FieldSelector.MatchExpressions {
			ok, err := matchField(cluster, &affinity.FieldSelector.MatchExpressions[i])
			if err != nil {
				return false, fmt.Errorf("fieldSelector.matchExpressions[%d]: %w", i, err)
			}
			if !ok {
				return false, nil
			}
		}
	}
	if len(affinity.ClusterNames) > 0 && !slices.Contains(affinity.ClusterNames, cluster.Name) {
		return false, nil
	}
	return true, nil
}

func matchField(cluster *clusterv1alpha1.Cluster, req *corev1.NodeSelectorRequirement) (bool, error) {
	if req.Operator != corev1.NodeSelectorOpIn && req.Operator != corev1.NodeSelectorOpNotIn {
		return false, fmt.Errorf("operator %q is not supported, use In or NotIn", req.Operator)
	}
	in := req.Operator == corev1.NodeSelectorOpIn
	switch req.Key {
	case ProviderField, RegionField:
		v := cluster.Spec.Provider
		if req.Key == RegionField {
			v = cluster.Spec.Region
		}
		if v == "" {
			return !in, nil
		}
		return slices.Contains(req.Values, v) == in, nil
	case ZoneField:
		zones := cluster.Spec.Zones
		if len(zones) == 0 && cluster.Spec.Zone != "" {
			zones = []string{cluster.Spec.Zone}
		}
		if in {
			if len(zones) == 0 {
				return false, nil
			}
			for _, z := range zones {
				if !slices.Contains(req.Values, z) {
					return false, nil
				}
			}
			return true, nil
		}
		for _, z := range zones {
			if slices.Contains(req.Values, z) {
				return false, nil
			}
		}
		return true, nil
	default:
		return false, fmt.Errorf("key %q is not supported, use provider, region or zone", req.Key)
	}
}
