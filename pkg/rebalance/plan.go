// Package rebalance plans gradual moves of a workload's replicas between
// member clusters: the next step from a running distribution toward a
// target, the per-cluster HPA bounds that steer member autoscalers, and the
// test of whether a new scheduling result is a move at all. It is pure: the
// controller in pkg/controller/rebalance reads and writes the API.
package rebalance

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/division"
)

// Distribution is a replica count per cluster. A missing cluster has 0.
type Distribution map[string]int32

// FromTargets reads a binding's spec.clusters.
func FromTargets(ts []workv1alpha2.TargetCluster) Distribution {
	d := make(Distribution, len(ts))
	for _, t := range ts {
		d[t.Name] += t.Replicas
	}
	return d
}

// FromReplicas reads a Rebalance status list.
func FromReplicas(rs []appsv1alpha1.ClusterReplicas) Distribution {
	d := make(Distribution, len(rs))
	for _, r := range rs {
		d[r.Name] += r.Replicas
	}
	return d
}

// Names are the clusters with a positive count, sorted.
func (d Distribution) Names() []string {
	var out []string
	for c, n := range d {
		if n > 0 {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Targets is d as spec.clusters: positive counts only, sorted by name.
func (d Distribution) Targets() []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for _, c := range d.Names() {
		out = append(out, workv1alpha2.TargetCluster{Name: c, Replicas: d[c]})
	}
	return out
}

// Replicas is d as a Rebalance status list: positive counts, sorted.
func (d Distribution) Replicas() []appsv1alpha1.ClusterReplicas {
	var out []appsv1alpha1.ClusterReplicas
	for _, c := range d.Names() {
		out = append(out, appsv1alpha1.ClusterReplicas{Name: c, Replicas: d[c]})
	}
	return out
}

// Total is the sum of the counts.
func (d Distribution) Total() int32 {
	var n int32
	for _, v := range d {
		n += v
	}
	return n
}

// Equal compares two distributions, missing clusters counting as 0.
func (d Distribution) Equal(o Distribution) bool {
	for c, n := range d {
		if o[c] != n {
			return false
		}
	}
	for c, n := range o {
		if d[c] != n {
			return false
		}
	}
	return true
}

// String is the counts in the order of names, "10:10".
func (d Distribution) String(names []string) string {
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = strconv.Itoa(int(d[c]))
	}
	return strings.Join(parts, ":")
}

// Union is the sorted names of the clusters either distribution mentions
// with a positive count.
func Union(ds ...Distribution) []string {
	seen := map[string]bool{}
	for _, d := range ds {
		for _, c := range d.Names() {
			seen[c] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// IsMove reports whether going from cur to next moves replicas between
// clusters: some cluster gains while another loses. A pure scale-up or
// scale-down, a first placement and an empty result are not moves.
func IsMove(cur, next Distribution) bool {
	var up, down bool
	for _, c := range Union(cur, next) {
		switch {
		case next[c] > cur[c]:
			up = true
		case next[c] < cur[c]:
			down = true
		}
	}
	return up && down && cur.Total() > 0 && next.Total() > 0
}

// Split divides total over weights with the project's Webster division
// (names ascending on ties), dropping clusters left at 0.
func Split(total int32, weights map[string]int64) Distribution {
	ws := make([]division.ClusterWeight, 0, len(weights))
	for _, c := range slices.Sorted(maps.Keys(weights)) {
		if weights[c] > 0 {
			ws = append(ws, division.ClusterWeight{Name: c, Weight: weights[c]})
		}
	}
	return FromTargets(division.Webster(total, ws, division.NameAscending))
}

// Weights uses a distribution's counts as weights.
func (d Distribution) Weights() map[string]int64 {
	w := make(map[string]int64, len(d))
	for c, n := range d {
		if n > 0 {
			w[c] = int64(n)
		}
	}
	return w
}

// Batch is how many replicas a step moves for a workload of total
// replicas: maxSurge (an integer, or a percentage of total rounded up;
// default 25%), at least minBatch (default 1), at least 1.
func Batch(maxSurge *intstr.IntOrString, minBatch *int32, total int32) (int32, error) {
	surge := intstr.FromString("25%")
	if maxSurge != nil {
		surge = *maxSurge
	}
	if unit, err := intstr.GetScaledValueFromIntOrPercent(&surge, 100, true); err != nil || unit <= 0 {
		return 0, fmt.Errorf("spec.maxSurge: %q must be a positive integer or percentage", surge.String())
	}
	n, _ := intstr.GetScaledValueFromIntOrPercent(&surge, int(total), true)
	b := int32(n)
	if minBatch != nil && *minBatch > b {
		b = *minBatch
	}
	return max(b, 1), nil
}

// NextStep is the distribution one step moves cur to on the way to final:
// up to batch replicas are added to the clusters below final (in proportion
// to what each lacks), and as many are taken from the clusters above it (in
// proportion to what each has too many), plus whatever the total shrinks
// by. So every cluster moves only toward final, no step lowers the total
// below the smaller of the two totals, clusters already at final are left
// alone, and the last step ends exactly at final.
func NextStep(cur, final Distribution, batch int32) Distribution {
	up, down := Distribution{}, Distribution{}
	var lack, excess int32
	for _, c := range Union(cur, final) {
		switch d := final[c] - cur[c]; {
		case d > 0:
			up[c], lack = d, lack+d
		case d < 0:
			down[c], excess = -d, excess-d
		}
	}
	add := min(lack, max(batch, 1))
	shrink := max(0, cur.Total()-final.Total())
	remove := min(excess, add+shrink)
	next := Distribution{}
	for c, n := range cur {
		if n > 0 {
			next[c] = n
		}
	}
	for c, n := range apportion(add, up) {
		next[c] += n
	}
	for c, n := range apportion(remove, down) {
		next[c] -= n
		if next[c] == 0 {
			delete(next, c)
		}
	}
	return next
}

// apportion divides n over the clusters of limits in proportion to their
// limits; no cluster gets more than its limit while n is at most their sum
// (a divisor method never gives a party more seats than its votes when
// seats <= votes).
func apportion(n int32, limits Distribution) Distribution {
	if n <= 0 || len(limits) == 0 {
		return nil
	}
	return Split(n, limits.Weights())
}

// Plan is every step from cur to final, in order (the last equals final).
// It stops after 10,000 steps, which no valid batch reaches.
func Plan(cur, final Distribution, batch int32) []Distribution {
	var steps []Distribution
	for i := 0; i < 10000 && !cur.Equal(final); i++ {
		cur = NextStep(cur, final, batch)
		steps = append(steps, cur)
	}
	return steps
}

// ScaleUp is the first half of the step from cur to next: every cluster at
// the larger of its two counts, so targets grow while sources keep theirs.
func ScaleUp(cur, next Distribution) Distribution {
	out := Distribution{}
	for _, c := range Union(cur, next) {
		out[c] = max(cur[c], next[c])
	}
	return out
}
