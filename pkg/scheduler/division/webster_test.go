package division

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// UIDs whose 32-bit FNV-1a hashes are the published test vectors:
// fnv1a32("a") = 0xe40c292c (even), fnv1a32("b") = 0xe70c2de5 (odd).
const (
	evenUID types.UID = "a"
	oddUID  types.UID = "b"
)

func weights(kv ...any) []ClusterWeight {
	var out []ClusterWeight
	for i := 0; i < len(kv); i += 2 {
		out = append(out, ClusterWeight{Name: kv[i].(string), Weight: int64(kv[i+1].(int))})
	}
	return out
}

func targets(kv ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(kv); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
	}
	return out
}

func TestNameOrderForUID(t *testing.T) {
	cases := map[string]struct {
		uid  types.UID
		want NameOrder
	}{
		"empty UID":      {uid: "", want: NameAscending},
		"even hash":      {uid: evenUID, want: NameAscending},
		"odd hash":       {uid: oddUID, want: NameDescending},
		"even hash uuid": {uid: "uid-b", want: NameAscending},
		"odd hash uuid":  {uid: "11111111-1111-1111-1111-111111111111", want: NameDescending},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NameOrderForUID(tc.uid); got != tc.want {
				t.Errorf("NameOrderForUID(%q) = %v, want %v", tc.uid, got, tc.want)
			}
		})
	}
}

func TestWebster(t *testing.T) {
	cases := map[string]struct {
		replicas int32
		weights  []ClusterWeight
		uid      types.UID
		want     []workv1alpha2.TargetCluster
	}{
		"12 at 3:2:1": {
			replicas: 12, weights: weights("a", 3, "b", 2, "c", 1),
			want: targets("a", 6, "b", 4, "c", 2),
		},
		"13 at 3:2:1": {
			replicas: 13, weights: weights("a", 3, "b", 2, "c", 1),
			want: targets("a", 7, "b", 4, "c", 2),
		},
		"14 at 3:2:1 (8/4/2 with the pre-v1.16 largest remainder)": {
			replicas: 14, weights: weights("a", 3, "b", 2, "c", 1),
			want: targets("a", 7, "b", 5, "c", 2),
		},
		"7 at 1:2": {
			replicas: 7, weights: weights("a", 1, "b", 2),
			want: targets("a", 2, "b", 5),
		},
		"output sorted by name whatever the input order": {
			replicas: 12, weights: weights("c", 1, "a", 3, "b", 2),
			want: targets("a", 6, "b", 4, "c", 2),
		},
		"0-seat clusters are listed": {
			replicas: 1, weights: weights("a", 3, "b", 2, "c", 1),
			want: targets("a", 1, "b", 0, "c", 0),
		},
		"zero replicas": {
			replicas: 0, weights: weights("a", 1, "b", 1),
			want: targets("a", 0, "b", 0),
		},
		"no clusters": {replicas: 3},
		"equal weights, 4 replicas, empty UID: the remainder goes to the first name": {
			replicas: 4, weights: weights("a", 1, "b", 1, "c", 1),
			want: targets("a", 2, "b", 1, "c", 1),
		},
		"equal weights, 4 replicas, even UID hash: ascending": {
			replicas: 4, weights: weights("a", 1, "b", 1, "c", 1), uid: evenUID,
			want: targets("a", 2, "b", 1, "c", 1),
		},
		"equal weights, 4 replicas, odd UID hash: descending": {
			replicas: 4, weights: weights("a", 1, "b", 1, "c", 1), uid: oddUID,
			want: targets("a", 1, "b", 1, "c", 2),
		},
		"equal weights, 1 replica, odd UID hash": {
			replicas: 1, weights: weights("m1", 5, "m2", 5), uid: oddUID,
			want: targets("m1", 0, "m2", 1),
		},
		"equal priority, fewer seats wins before the name": {
			// After a:1 (3/3 = 1) and c:0 (1/1 = 1) tie, c has fewer seats,
			// so with ascending names c still gets the third seat.
			replicas: 3, weights: weights("a", 3, "b", 2, "c", 1),
			want: targets("a", 1, "b", 1, "c", 1),
		},
		"weight 0 gets nothing while others have weight": {
			replicas: 5, weights: weights("a", 0, "b", 1),
			want: targets("a", 0, "b", 5),
		},
		"all weights 0 share equally": {
			replicas: 4, weights: weights("a", 0, "b", 0),
			want: targets("a", 2, "b", 2),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Webster(tc.replicas, tc.weights, NameOrderForUID(tc.uid))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Webster (-want +got):\n%s", diff)
			}
		})
	}
}

// reference is the textbook Webster allocation: each seat to the best
// party by a linear scan, with the same priority and tie-break.
func reference(replicas int32, ws []ClusterWeight, order NameOrder) map[string]int32 {
	parties := make([]party, len(ws))
	for i, w := range ws {
		parties[i] = party{name: w.Name, votes: max(w.Weight, 0)}
	}
	for range replicas {
		best := 0
		for i := 1; i < len(parties); i++ {
			if before(parties[i], parties[best], order) {
				best = i
			}
		}
		parties[best].seats++
	}
	out := map[string]int32{}
	for _, p := range parties {
		out[p.name] = p.seats
	}
	return out
}

func FuzzWebster(f *testing.F) {
	f.Add(uint16(12), []byte{3, 2, 1}, "")
	f.Add(uint16(14), []byte{3, 2, 1}, "b")
	f.Add(uint16(7), []byte{1, 2}, "a")
	f.Add(uint16(4), []byte{1, 1, 1}, "b")
	f.Add(uint16(9), []byte{0, 0, 0, 0}, "uid")
	f.Add(uint16(1000), []byte{255, 1, 7, 7, 64, 0, 3}, "11111111-1111-1111-1111-111111111111")
	f.Fuzz(func(t *testing.T, n uint16, raw []byte, uid string) {
		replicas := int32(n % 2000)
		if len(raw) > 24 {
			raw = raw[:24]
		}
		ws := make([]ClusterWeight, len(raw))
		for i, b := range raw {
			// Names out of order on purpose: the result must be sorted.
			ws[i] = ClusterWeight{Name: string(rune('z' - i)), Weight: int64(b)}
		}
		order := NameOrderForUID(types.UID(uid))
		got := Webster(replicas, ws, order)
		if len(ws) == 0 {
			if got != nil {
				t.Fatalf("no clusters gave %v", got)
			}
			return
		}
		if len(got) != len(ws) {
			t.Fatalf("got %d clusters, want %d", len(got), len(ws))
		}
		var sum int32
		for i, tc := range got {
			sum += tc.Replicas
			if i > 0 && got[i-1].Name >= tc.Name {
				t.Fatalf("result not sorted by name: %v", got)
			}
		}
		if sum != replicas {
			t.Fatalf("sum of replicas %d, want %d: %v", sum, replicas, got)
		}

		ref := reference(replicas, ws, order)
		votes := map[string]int64{}
		for _, w := range ws {
			votes[w.Name] = w.Weight
		}
		// Divisor property: no cluster's next-seat priority beats the
		// priority at which any cluster won its last seat.
		maxNext, minLast := -1.0, -1.0
		for _, tc := range got {
			if ref[tc.Name] != tc.Replicas {
				t.Fatalf("heap result %v differs from the linear reference %v", got, ref)
			}
			next := float64(votes[tc.Name]) / float64(2*int64(tc.Replicas)+1)
			maxNext = max(maxNext, next)
			if tc.Replicas > 0 {
				last := float64(votes[tc.Name]) / float64(2*int64(tc.Replicas)-1)
				if minLast < 0 || last < minLast {
					minLast = last
				}
			}
		}
		if minLast >= 0 && maxNext > minLast {
			t.Fatalf("not a divisor-method result: a next seat at priority %v beats a won seat at %v: %v", maxNext, minLast, got)
		}

		// House monotonicity: one more replica takes nothing away.
		more := Webster(replicas+1, ws, order)
		added := 0
		for i := range got {
			switch d := more[i].Replicas - got[i].Replicas; d {
			case 0:
			case 1:
				added++
			default:
				t.Fatalf("%d → %d replicas changed %s by %d: %v → %v", replicas, replicas+1, got[i].Name, d, got, more)
			}
		}
		if added != 1 {
			t.Fatalf("%d → %d replicas added %d seats: %v → %v", replicas, replicas+1, added, got, more)
		}
	})
}
