package division

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func TestAvailableReplicas(t *testing.T) {
	type rl = map[corev1.ResourceName]string
	cases := map[string]struct {
		cluster  *clusterv1alpha1.Cluster
		request  rl
		replicas int32
		want     int32
	}{
		"no summary": {
			cluster: utiltesting.MakeCluster("m").Obj(), request: rl{"cpu": "1"}, replicas: 5, want: 0,
		},
		"cpu in millicores, minus allocated": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "4", "memory": "64Gi"}, rl{"cpu": "1500m"}).Obj(),
			request: rl{"cpu": "500m"}, replicas: 100, want: 5,
		},
		"minimum over resources": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "8", "memory": "4Gi"}, nil).Obj(),
			request: rl{"cpu": "1", "memory": "1Gi"}, replicas: 100, want: 4,
		},
		"bounded by free pods": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "8", "pods": "10"}, rl{"pods": "7"}).Obj(),
			request: rl{"cpu": "1"}, replicas: 100, want: 3,
		},
		"a requested resource the cluster lacks": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "8"}, nil).Obj(),
			request: rl{"nvidia.com/gpu": "1"}, replicas: 100, want: 0,
		},
		"over-allocated is 0, not negative": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "1"}, rl{"cpu": "2"}).Obj(),
			request: rl{"cpu": "1"}, replicas: 100, want: 0,
		},
		"no requests: unbounded, capped at replicas": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "1"}, nil).Obj(), replicas: 7, want: 7,
		},
		"no requests: the pod bound applies": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"pods": "110"}, rl{"pods": "100"}).Obj(), replicas: 70, want: 10,
		},
		"zero requests are ignored": {
			cluster: utiltesting.MakeCluster("m").ResourceSummary(rl{"cpu": "1"}, nil).Obj(), request: rl{"cpu": "0"}, replicas: 9, want: 9,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var req *workv1alpha2.ReplicaRequirements
			if tc.request != nil {
				req = utiltesting.MakeBinding("b", "ns").ResourceRequest(tc.request).Obj().Spec.ReplicaRequirements
			}
			if got := AvailableReplicas(tc.cluster, req, tc.replicas); got != tc.want {
				t.Errorf("AvailableReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}

func avail(pairs ...any) []ClusterAvailable {
	var out []ClusterAvailable
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, ClusterAvailable{Name: pairs[i].(string), Available: int32(pairs[i+1].(int))})
	}
	return out
}

func TestDynamic(t *testing.T) {
	cases := map[string]struct {
		in            DynamicInput
		want          []workv1alpha2.TargetCluster
		wantAvailable int64
		wantNeeded    int64
	}{
		"dynamic weight, first schedule: 6/12/18 and 12 → 2/4/6 (Karmada's type doc)": {
			in:   DynamicInput{Replicas: 12, Candidates: avail("A", 6, "B", 12, "C", 18)},
			want: targets("A", 2, "B", 4, "C", 6),
		},
		"dynamic weight drops clusters left with 0": {
			in:   DynamicInput{Replicas: 2, Candidates: avail("A", 1, "B", 10, "C", 0)},
			want: targets("B", 2),
		},
		"not enough available replicas": {
			in:            DynamicInput{Replicas: 10, Candidates: avail("A", 3, "B", 4)},
			wantAvailable: 7, wantNeeded: 10,
		},
		"steady, equal: previous result unchanged": {
			in:   DynamicInput{Replicas: 6, Candidates: avail("A", 100, "B", 0), Previous: targets("A", 1, "B", 5)},
			want: targets("A", 1, "B", 5),
		},
		"steady, scale up adds desired−assigned by available onto the previous result": {
			in:   DynamicInput{Replicas: 10, Candidates: avail("A", 3, "B", 1), Previous: targets("A", 1, "B", 5)},
			want: targets("A", 4, "B", 6),
		},
		"steady, scale up beyond available is unschedulable": {
			in:            DynamicInput{Replicas: 10, Candidates: avail("A", 1, "B", 1), Previous: targets("A", 1, "B", 5)},
			wantAvailable: 2, wantNeeded: 4,
		},
		"steady, scale down in proportion to the previous result": {
			in:   DynamicInput{Replicas: 6, Candidates: avail("A", 0, "B", 0, "C", 100), Previous: targets("A", 4, "B", 8)},
			want: targets("A", 2, "B", 4),
		},
		"steady: previous entries of clusters that are no longer candidates are ignored": {
			in:   DynamicInput{Replicas: 6, Candidates: avail("A", 10, "C", 2), Previous: targets("A", 3, "B", 3)},
			want: targets("A", 5, "C", 1),
		},
		"fresh: weights are available + assigned, previous ignored": {
			in: DynamicInput{Replicas: 6, Fresh: true, Candidates: avail("A", 0, "B", 6),
				Previous: targets("A", 6)},
			want: targets("A", 3, "B", 3),
		},
		"aggregated, first schedule: fewest clusters, largest first": {
			in:   DynamicInput{Replicas: 12, Aggregated: true, Candidates: avail("A", 6, "B", 12, "C", 18)},
			want: targets("C", 12),
		},
		"aggregated needs two clusters: split by available": {
			in:   DynamicInput{Replicas: 24, Aggregated: true, Candidates: avail("A", 6, "B", 12, "C", 18)},
			want: targets("B", 10, "C", 14),
		},
		"aggregated scale up prefers clusters already holding replicas": {
			in:   DynamicInput{Replicas: 6, Aggregated: true, Candidates: avail("A", 4, "B", 100), Previous: targets("A", 2)},
			want: targets("A", 6),
		},
		"aggregated scale down concentrates on the largest previous clusters": {
			in:   DynamicInput{Replicas: 4, Aggregated: true, Candidates: avail("A", 0, "B", 0), Previous: targets("A", 2, "B", 5)},
			want: targets("B", 4),
		},
		"fresh aggregated keeps holders first": {
			in:   DynamicInput{Replicas: 5, Aggregated: true, Fresh: true, Candidates: avail("A", 1, "B", 100), Previous: targets("A", 4)},
			want: targets("A", 5),
		},
		"ties follow the UID name order": {
			in:   DynamicInput{Replicas: 1, Candidates: avail("A", 5, "B", 5), UID: oddUID},
			want: targets("B", 1),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Dynamic(tc.in)
			var ins *InsufficientError
			if tc.wantNeeded > 0 {
				if !errors.As(err, &ins) || ins.Available != tc.wantAvailable || ins.Needed != tc.wantNeeded {
					t.Fatalf("error = %v, want InsufficientError %d/%d", err, tc.wantAvailable, tc.wantNeeded)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Dynamic (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsFresh(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	cases := map[string]struct {
		triggered, last *metav1.Time
		want            bool
	}{
		"never triggered":          {last: &t0},
		"never scheduled":          {triggered: &t1},
		"triggered after the last": {triggered: &t1, last: &t0, want: true},
		"triggered before":         {triggered: &t0, last: &t1},
		"same instant":             {triggered: &t0, last: &t0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsFresh(tc.triggered, tc.last); got != tc.want {
				t.Errorf("IsFresh = %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzDynamic checks the invariants of the dynamic division: the sum is
// the replicas, no cluster exceeds its weight budget in a first schedule,
// only candidates are used, and "insufficient" happens exactly when the
// available replicas do not cover the target.
func FuzzDynamic(f *testing.F) {
	f.Add(uint16(12), []byte{6, 12, 18}, []byte{}, false, false)
	f.Add(uint16(30), []byte{6, 12, 18}, []byte{1, 0, 5}, true, false)
	f.Add(uint16(3), []byte{0, 9, 1, 4}, []byte{2, 2, 2, 2}, false, true)
	f.Fuzz(func(t *testing.T, n uint16, av, prev []byte, aggregated, fresh bool) {
		replicas := int32(n % 1000)
		if len(av) > 12 {
			av = av[:12]
		}
		in := DynamicInput{Replicas: replicas, Aggregated: aggregated, Fresh: fresh, UID: "u"}
		isCandidate := map[string]bool{}
		for i, b := range av {
			name := string(rune('a' + i))
			in.Candidates = append(in.Candidates, ClusterAvailable{Name: name, Available: int32(b)})
			isCandidate[name] = true
		}
		var assigned int64
		for i, b := range prev {
			if i >= 14 {
				break
			}
			name := string(rune('a' + i))
			in.Previous = append(in.Previous, workv1alpha2.TargetCluster{Name: name, Replicas: int32(b % 8)})
			if isCandidate[name] {
				assigned += int64(b % 8)
			}
		}
		got, err := Dynamic(in)
		var ins *InsufficientError
		if errors.As(err, &ins) {
			if ins.Available >= ins.Needed {
				t.Fatalf("insufficient with %d available for %d", ins.Available, ins.Needed)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, tc := range got {
			if !isCandidate[tc.Name] {
				t.Fatalf("non-candidate %s in %v", tc.Name, got)
			}
			if tc.Replicas <= 0 {
				t.Fatalf("0-replica cluster in %v", got)
			}
			sum += int64(tc.Replicas)
		}
		if sum != int64(replicas) {
			t.Fatalf("sum %d, want %d: %v (input %+v)", sum, replicas, got, in)
		}
		if !fresh && assigned > int64(replicas) {
			// Scale down never grows a cluster.
			was := map[string]int32{}
			for _, tc := range in.Previous {
				was[tc.Name] = tc.Replicas
			}
			for _, tc := range got {
				if tc.Replicas > was[tc.Name] {
					t.Fatalf("scale down grew %s: %v → %v", tc.Name, in.Previous, got)
				}
			}
		}
	})
}
