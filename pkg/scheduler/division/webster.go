package division

import (
	"container/heap"
	"hash/fnv"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// ClusterWeight is a cluster's share in a division.
type ClusterWeight struct {
	Name   string
	Weight int64
}

// NameOrder breaks ties between clusters with equal priority and equal
// seats.
type NameOrder int

const (
	// NameAscending gives the seat to the smaller name.
	NameAscending NameOrder = iota
	// NameDescending gives the seat to the larger name.
	NameDescending
)

// NameOrderForUID is Karmada's tie-break direction for a resource: names
// ascending when the 32-bit FNV-1a hash of uid is even or uid is empty,
// descending when it is odd. It spreads the remainder seats of many equal
// workloads over different clusters instead of always the first by name.
func NameOrderForUID(uid types.UID) NameOrder {
	if uid == "" {
		return NameAscending
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	if h.Sum32()%2 == 1 {
		return NameDescending
	}
	return NameAscending
}

// Webster divides replicas over the clusters of weights by the Webster
// method. The result has one entry per cluster of weights, zero-seat
// clusters included, sorted by name. Cluster names must be unique;
// negative weights count as zero.
func Webster(replicas int32, weights []ClusterWeight, order NameOrder) []workv1alpha2.TargetCluster {
	if len(weights) == 0 {
		return nil
	}
	q := &websterQueue{parties: make([]party, len(weights)), order: order}
	for i, w := range weights {
		q.parties[i] = party{name: w.Name, votes: max(w.Weight, 0)}
	}
	heap.Init(q)
	for range max(replicas, 0) {
		q.parties[0].seats++
		heap.Fix(q, 0)
	}
	out := make([]workv1alpha2.TargetCluster, len(q.parties))
	for i, p := range q.parties {
		out[i] = workv1alpha2.TargetCluster{Name: p.name, Replicas: p.seats}
	}
	slices.SortFunc(out, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type party struct {
	name  string
	votes int64
	seats int32
}

// priority is Karmada's votes/(2*seats+1) as float64 (the divisor is
// computed in 64 bits, so it cannot overflow).
func (p party) priority() float64 {
	return float64(p.votes) / float64(2*int64(p.seats)+1)
}

// websterQueue is a heap whose top is the party that gets the next seat.
type websterQueue struct {
	parties []party
	order   NameOrder
}

func (q *websterQueue) Len() int      { return len(q.parties) }
func (q *websterQueue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *websterQueue) Less(i, j int) bool {
	return before(q.parties[i], q.parties[j], q.order)
}
func (q *websterQueue) Push(x any) { q.parties = append(q.parties, x.(party)) }
func (q *websterQueue) Pop() any {
	n := len(q.parties) - 1
	p := q.parties[n]
	q.parties = q.parties[:n]
	return p
}

// before reports whether a gets the next seat before b.
func before(a, b party, order NameOrder) bool {
	pa, pb := a.priority(), b.priority()
	if pa != pb {
		return pa > pb
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	if order == NameDescending {
		return a.name > b.name
	}
	return a.name < b.name
}
