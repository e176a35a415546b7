package bindingjson_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingjson"
	"github.com/atoll-dev/atoll/pkg/util/wire"
)

// fixtures are bindings as the control plane served them: with
// managedFields (pkg/util/wire's), and a weighted one with a larger
// placement (pkg/manager's).
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, path := range map[string]string{
		"deployment": "../wire/testdata/resourcebinding-deployment.json",
		"configmap":  "../wire/testdata/resourcebinding-configmap.json",
		"indented":   "../../manager/testdata/binding-deployment.json",
		"weighted":   "../../manager/testdata/binding-weighted.json",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// decoders are wire's typed decoder without and with Decode: what the
// binding informers used before and use now.
func decoders(t testing.TB) (reflective, fast runtime.Decoder) {
	t.Helper()
	s := runtime.NewScheme()
	if err := workv1alpha2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return wire.NewTypedSerializer(s, nil).Objects, wire.NewTypedSerializer(s, bindingjson.Decode).Objects
}

// same decodes doc both ways and reports a difference in result or error.
func same(reflective, fast runtime.Decoder, doc []byte) error {
	want, _, wantErr := reflective.Decode(doc, nil, nil)
	got, _, gotErr := fast.Decode(doc, nil, nil)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		return fmt.Errorf("error %v, reflective %v", gotErr, wantErr) //nolint:errorlint // either may be nil; both are only printed
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("differs from the reflective decode (-reflective +fast):\n%s", cmp.Diff(want, got))
	}
	return nil
}

// edit replaces from, which must be in doc, with to.
func edit(t *testing.T, doc []byte, from, to string) []byte {
	t.Helper()
	if !bytes.Contains(doc, []byte(from)) {
		t.Fatalf("%q is not in the document", from)
	}
	return bytes.Replace(doc, []byte(from), []byte(to), 1)
}

func TestDecodeGivesTheReflectiveResult(t *testing.T) {
	reflective, fast := decoders(t)
	fx := fixtures(t)
	dep := fx["deployment"]
	for _, tc := range []struct {
		name string
		doc  []byte
		// declined: Decode leaves it to the reflective decoder.
		declined bool
	}{
		{name: "a Deployment's binding, managedFields and all", doc: dep},
		{name: "a ConfigMap's binding", doc: fx["configmap"]},
		{name: "indented", doc: fx["indented"]},
		{name: "weighted placement", doc: fx["weighted"]},
		{name: "a ClusterResourceBinding", doc: edit(t, edit(t, dep, `"kind":"ResourceBinding"`, `"kind":"ClusterResourceBinding"`), `"namespace":"scale",`, ``)},
		// (The indented fixture has no escaped quotes for the edit to hit.)
		{name: "spaces around everything", doc: bytes.ReplaceAll(bytes.ReplaceAll(fx["indented"], []byte(`":`), []byte("\" :\r\n ")), []byte(`,`), []byte(" ,\t"))},
		{name: "trailing whitespace", doc: append(bytes.Clone(dep), " \n"...)},
		{name: "escapes in values", doc: edit(t, dep, `"finalizers":["atoll.dev/cleanup"]`, `"finalizers":["atoll.dev/cl\u0065anup\n\"q\""]`)},
		{name: "non-ASCII values", doc: edit(t, dep, `"propagationpolicy.karmada.io/name":"all"`, `"propagationpolicy.karmada.io/name":"été ☃"`)},
		{name: "invalid UTF-8 in a value", doc: edit(t, dep, `"propagationpolicy.karmada.io/name":"all"`, "\"propagationpolicy.karmada.io/name\":\"a\xffl\"")},
		{name: "null label value", doc: edit(t, dep, `"propagationpolicy.karmada.io/name":"all"`, `"propagationpolicy.karmada.io/name":null`)},
		{name: "a label key twice", doc: edit(t, dep, `"propagationpolicy.karmada.io/name":"all"`, `"propagationpolicy.karmada.io/name":"all","propagationpolicy.karmada.io/name":"other"`)},
		{name: "empty maps and lists", doc: edit(t, edit(t, dep, `"finalizers":["atoll.dev/cleanup"]`, `"finalizers":[]`), `"clusterNames":["member1","member2"]`, `"clusterNames":[]`)},
		{name: "null lists, maps and pointers", doc: edit(t, edit(t, edit(t, dep, `"finalizers":["atoll.dev/cleanup"]`, `"finalizers":null,"deletionTimestamp":null,"deletionGracePeriodSeconds":null`), `"conflictResolution":"Abort"`, `"conflictResolution":null,"replicaRequirements":null,"failover":null,"rescheduleTriggeredAt":null`), `"schedulerObservedGeneration":2`, `"schedulerObservedGeneration":null,"aggregatedStatus":null`), declined: true},
		{name: "being deleted", doc: edit(t, dep, `"generation":2`, `"generation":2,"deletionTimestamp":"2026-12-04T22:00:00Z","deletionGracePeriodSeconds":0`)},
		{name: "a time with an offset", doc: edit(t, dep, `"creationTimestamp":"2026-12-04T21:39:13Z"`, `"creationTimestamp":"2026-12-04T23:39:13+02:00"`)},
		{name: "a null time", doc: edit(t, dep, `"creationTimestamp":"2026-12-04T21:39:13Z"`, `"creationTimestamp":null`)},
		{name: "a time that is not one", doc: edit(t, dep, `"creationTimestamp":"2026-12-04T21:39:13Z"`, `"creationTimestamp":"yesterday"`), declined: true},
		{name: "a time that is a number", doc: edit(t, dep, `"creationTimestamp":"2026-12-04T21:39:13Z"`, `"creationTimestamp":5`), declined: true},
		{name: "owner flags null", doc: edit(t, dep, `"blockOwnerDeletion":false`, `"blockOwnerDeletion":null`)},
		{name: "owner flag a string", doc: edit(t, dep, `"blockOwnerDeletion":false`, `"blockOwnerDeletion":"false"`), declined: true},
		{name: "replica requirements, propagateDeps, preserve, reschedule", doc: edit(t, dep, `"conflictResolution":"Abort"`, `"conflictResolution":"Overwrite","propagateDeps":true,"preserveResourcesOnDeletion":true,"rescheduleTriggeredAt":"2026-12-04T21:40:00Z","replicaRequirements":{"namespace":"scale","resourceRequest":{"cpu":"10m","memory":"1Gi"},"nodeClaim":{"nodeSelector":{"a":"b"}}},"failover":{"application":{"decisionConditions":{"tolerationSeconds":30},"purgeMode":"Graciously"}}`)},
		{name: "a status that is not an object", doc: edit(t, dep, `"status":{"generation":1}`, `"status":"x"`)},
		{name: "a status that is null", doc: edit(t, dep, `"status":{"generation":1}`, `"status":null`)},
		{name: "a status with spaces inside", doc: edit(t, dep, `"status":{"generation":1}`, `"status":{ "generation" : 1 , "x":[1, 2] }`)},
		{name: "a status with a bad literal inside", doc: edit(t, dep, `"status":{"generation":1}`, `"status":{"generation":tru}`), declined: true},
		{name: "a status with a bad number inside", doc: edit(t, dep, `"status":{"generation":1}`, `"status":{"generation":01}`), declined: true},
		{name: "negative zero generation", doc: edit(t, dep, `"generation":2`, `"generation":-0`)},
		{name: "a fractional generation", doc: edit(t, dep, `"generation":2`, `"generation":2.0`), declined: true},
		{name: "an exponent", doc: edit(t, dep, `"generation":2`, `"generation":2e0`), declined: true},
		{name: "a leading zero", doc: edit(t, dep, `"generation":2`, `"generation":02`), declined: true},
		{name: "replicas past int32", doc: edit(t, dep, `"replicas":1}`, `"replicas":2147483648}`), declined: true},
		{name: "generation past int64", doc: edit(t, dep, `"generation":2`, `"generation":9223372036854775808`), declined: true},
		{name: "a string where a number goes", doc: edit(t, dep, `"generation":2`, `"generation":"2"`), declined: true},
		{name: "a number where a string goes", doc: edit(t, dep, `"schedulerName":"default-scheduler"`, `"schedulerName":7`), declined: true},
		{name: "an unknown member", doc: edit(t, dep, `"schedulerName":"default-scheduler"`, `"schedulerName":"default-scheduler","components":[{"name":"a","replicas":1}]`), declined: true},
		{name: "an unknown top-level member", doc: edit(t, dep, `"kind":"ResourceBinding"`, `"kind":"ResourceBinding","extra":{}`), declined: true},
		{name: "a member twice", doc: edit(t, dep, `"schedulerName":"default-scheduler"`, `"schedulerName":"default-scheduler","schedulerName":"other"`), declined: true},
		{name: "an escaped key", doc: edit(t, dep, `"schedulerName":`, `"scheduler\u004eame":`), declined: true},
		{name: "a key in another case", doc: edit(t, dep, `"schedulerName":`, `"SchedulerName":`), declined: true},
		{name: "managedFields not a list", doc: edit(t, dep, `"managedFields":[`, `"managedFields":"x","ignored":[`), declined: true},
		{name: "garbage after the object", doc: append(bytes.Clone(dep), " {}"...), declined: true},
		{name: "cut short", doc: dep[:len(dep)/2], declined: true},
		{name: "a bare literal", doc: edit(t, dep, `"applied":true`, `"applied":tru`), declined: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := same(reflective, fast, tc.doc); err != nil {
				t.Fatal(err)
			}
			var rb workv1alpha2.ResourceBinding
			var crb workv1alpha2.ClusterResourceBinding
			var into runtime.Object = &rb
			if strings.Contains(tc.name, "ClusterResourceBinding") {
				into = &crb
			}
			if decoded := bindingjson.Decode(tc.doc, into); decoded == tc.declined {
				t.Errorf("Decode reported %v, want %v", decoded, !tc.declined)
			}
		})
	}
}

func TestDecodeLeavesOtherObjects(t *testing.T) {
	if bindingjson.Decode([]byte(`{"kind":"Work"}`), &workv1alpha2.ResourceBindingList{}) {
		t.Error("Decode decoded a list")
	}
}

// TestMutatedDocuments is FuzzDecode's deterministic part: 15,000
// mutations of each fixture (one to three bytes changed, dropped or added,
// from the characters JSON turns on), decoded with and without Decode.
// The fuzzing engine rarely reaches the bytes inside a value; this
// found the aggregated status taken without validation.
func TestMutatedDocuments(t *testing.T) {
	reflective, fast := decoders(t)
	alphabet := []byte("0123456789-+.eE\"\\{}[],: \ntfnulrsaxz\x00\xff")
	r := rand.New(rand.NewPCG(1, 2))
	differences := 0
	for name, doc := range fixtures(t) {
		for range 15000 {
			m := bytes.Clone(doc)
			for range 1 + r.IntN(3) {
				p := r.IntN(len(m))
				switch c := alphabet[r.IntN(len(alphabet))]; r.IntN(3) {
				case 0:
					m[p] = c
				case 1:
					m = append(m[:p], m[p+1:]...)
				default:
					m = append(m[:p], append([]byte{c}, m[p:]...)...)
				}
			}
			if err := same(reflective, fast, m); err != nil {
				if differences++; differences <= 3 {
					t.Errorf("%s mutated: %v\ndocument: %s", name, err, m)
				}
			}
		}
	}
	if differences > 3 {
		t.Errorf("%d more differences", differences-3)
	}
}

// FuzzDecode: for any document, the binding informers' decoder gives the
// same object or the same error with Decode as without it.
func FuzzDecode(f *testing.F) {
	for _, doc := range fixtures(f) {
		f.Add(doc)
	}
	f.Add([]byte(`{"kind":"ResourceBinding","apiVersion":"work.karmada.io/v1alpha2","metadata":{"name":"a","labels":{}},"spec":{"clusters":[]},"status":{}}`))
	f.Add([]byte(`{"kind":"ClusterResourceBinding","apiVersion":"work.karmada.io/v1alpha2","metadata":null,"spec":null,"status":{"conditions":null}}`))
	reflective, fast := decoders(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		if err := same(reflective, fast, doc); err != nil {
			t.Fatalf("%s\ndocument: %s", err, doc)
		}
	})
}

// BenchmarkDecode decodes a Deployment's binding (managedFields and all)
// as the binding informers did and as they do now.
func BenchmarkDecode(b *testing.B) {
	reflective, fast := decoders(b)
	doc := fixtures(b)["deployment"]
	for _, tc := range []struct {
		name string
		dec  runtime.Decoder
	}{{"reflective", reflective}, {"bindingjson", fast}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := tc.dec.Decode(doc, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
