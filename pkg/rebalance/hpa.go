package rebalance

import (
	"encoding/json"
	"fmt"
)

// HPALimitsAnnotation on a workload's ResourceBinding holds the floors and
// caps a move puts on its member HPAs, per cluster, as JSON
// ({"member2":{"min":9},"member1":{"max":3}}). The rebalance controller
// writes it together with spec.clusters; the executor renders the member
// HPAs from it. Absent: no move steers the HPAs.
const HPALimitsAnnotation = "apps.atoll.dev/hpa-limits"

// StepAnnotation on a workload's ResourceBinding records the half-step a
// move last wrote to it ("3/ScalingDown"), in the same patch as the
// half-step itself, so the binding is the record of its own state and the
// Rebalance status needs no write of its own for a step's second half.
const StepAnnotation = "apps.atoll.dev/rebalance-step"

// Limit is what a move imposes on one member HPA.
type Limit struct {
	// Min raises the HPA's minReplicas to at least this (a target's floor).
	Min int32 `json:"min,omitempty"`
	// Max lowers the HPA's maxReplicas to at most this (a source's cap).
	Max int32 `json:"max,omitempty"`
}

// Limits are the per-cluster limits of a move.
type Limits map[string]Limit

// ParseLimits reads the annotation value ("" is no limits).
func ParseLimits(v string) (Limits, error) {
	if v == "" {
		return nil, nil
	}
	var l Limits
	if err := json.Unmarshal([]byte(v), &l); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", HPALimitsAnnotation, err)
	}
	return l, nil
}

// Encode is the annotation value ("" for no limits).
func (l Limits) Encode() string {
	if len(l) == 0 {
		return ""
	}
	b, _ := json.Marshal(l) // a map of plain structs always encodes
	return string(b)
}

// Bounds are a member HPA's minReplicas and maxReplicas.
type Bounds struct {
	Min, Max int32
}

// HPABounds apportions a template HPA's minReplicas and maxReplicas over
// the clusters of the workload's distribution, by the same Webster division
// as the replicas (the distribution's counts are the weights), so the
// member HPAs together keep the template's bounds. Every cluster that runs
// replicas gets min >= 1 and max >= min, so the effective total min may
// exceed the template's (EffectiveMin reports it). limits then raise floors
// and lower caps; a cap never goes below the floor or below 1.
func HPABounds(workload Distribution, minReplicas, maxReplicas int32, limits Limits) map[string]Bounds {
	clusters := workload.Names()
	if len(clusters) == 0 {
		return nil
	}
	weights := workload.Weights()
	mins, maxs := Split(max(minReplicas, 1), weights), Split(maxReplicas, weights)
	out := make(map[string]Bounds, len(clusters))
	for _, c := range clusters {
		b := Bounds{Min: max(mins[c], 1), Max: maxs[c]}
		if l, ok := limits[c]; ok {
			b.Min = max(b.Min, l.Min)
			b.Max = max(b.Max, b.Min)
			if l.Max > 0 {
				b.Max = max(min(b.Max, l.Max), 1)
				b.Min = min(b.Min, b.Max)
			}
		}
		b.Max = max(b.Max, b.Min, 1)
		out[c] = b
	}
	return out
}

// EffectiveMin is the sum of the per-cluster floors.
func EffectiveMin(bounds map[string]Bounds) int32 {
	var n int32
	for _, b := range bounds {
		n += b.Min
	}
	return n
}
