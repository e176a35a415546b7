package jsonpack

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// memberDeployment is a member copy as the executor's informers hold it: a
// defaulted Deployment with atoll's labels and annotations and a status.
const memberDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"1","propagationpolicy.karmada.io/name":"web-pp","propagationpolicy.karmada.io/namespace":"shop","resourcebinding.karmada.io/name":"checkout-deployment","resourcebinding.karmada.io/namespace":"shop","resourcetemplate.karmada.io/generation":"3"},"creationTimestamp":"2026-12-03T21:14:05Z","generation":2,"labels":{"app":"checkout","atoll.dev/managed":"true","propagationpolicy.karmada.io/permanent-id":"5f0c2a9e-6f43-4f5e-9a51-1c8e7b3d2f10","resourcebinding.karmada.io/permanent-id":"a3d1e5c7-0b2f-4c8d-9e6a-7f1b2c3d4e5f"},"name":"checkout","namespace":"shop","resourceVersion":"48213","uid":"0c9e8f7a-6b5d-4c3e-2f1a-0b9c8d7e6f5a"},"spec":{"progressDeadlineSeconds":600,"replicas":3,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"checkout"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"checkout"}},"spec":{"containers":[{"image":"registry.example.com/shop/checkout:1.42.0","imagePullPolicy":"IfNotPresent","name":"checkout","ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"requests":{"cpu":"250m","memory":"256Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{"availableReplicas":3,"conditions":[{"lastTransitionTime":"2026-12-03T21:14:07Z","lastUpdateTime":"2026-12-03T21:14:07Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"},{"lastTransitionTime":"2026-12-03T21:14:05Z","lastUpdateTime":"2026-12-03T21:14:07Z","message":"ReplicaSet \"checkout-6d8f7b9c5d\" has successfully progressed.","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"}],"observedGeneration":2,"readyReplicas":3,"replicas":3,"updatedReplicas":3}}`

const memberConfigMap = `{"apiVersion":"v1","data":{"LOG_LEVEL":"info"},"kind":"ConfigMap","metadata":{"annotations":{"propagationpolicy.karmada.io/name":"web-pp","propagationpolicy.karmada.io/namespace":"shop","resourcebinding.karmada.io/name":"settings-configmap","resourcebinding.karmada.io/namespace":"shop","resourcetemplate.karmada.io/generation":"1"},"creationTimestamp":"2026-12-03T21:14:05Z","labels":{"atoll.dev/managed":"true","propagationpolicy.karmada.io/permanent-id":"5f0c2a9e-6f43-4f5e-9a51-1c8e7b3d2f10","resourcebinding.karmada.io/permanent-id":"b4e2f6d8-1c3a-4d9e-8f7b-6a5c4d3e2f1b"},"name":"settings","namespace":"shop","resourceVersion":"48214","uid":"1d0f9e8b-7c6e-4d5f-3a2b-1c0d9e8f7a6b"}}`

// serverOrder is doc as a kube-apiserver writes it (Go struct order),
// which is how member informers hold it.
func serverOrder(t testing.TB, doc string, obj any) string {
	t.Helper()
	if err := json.Unmarshal([]byte(doc), obj); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestRoundTrip(t *testing.T) {
	random := make([]byte, 4096)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		kind string
		form Form
		data []byte
	}{
		"deployment":                {"Deployment", Sorted, []byte(memberDeployment)},
		"deployment, server order":  {"Deployment", Server, []byte(serverOrder(t, memberDeployment, &appsv1.Deployment{}))},
		"configmap":                 {"ConfigMap", Sorted, []byte(memberConfigMap)},
		"configmap, general":        {"", Sorted, []byte(memberConfigMap)},
		"deployment as a ConfigMap": {"ConfigMap", Server, []byte(memberDeployment)},
		"another kind":              {"Service", Server, []byte(memberDeployment)},
		"tiny":                      {"ConfigMap", Sorted, []byte(`{}`)},
		"empty":                     {"", Sorted, []byte{}},
		"random":                    {"Deployment", Server, random},
		"large":                     {"Deployment", Sorted, []byte(strings.Repeat(memberDeployment, 50))},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			packed := Pack(c.kind, c.form, c.data)
			if len(packed) > len(c.data)+1 {
				t.Fatalf("packed %d bytes into %d: more than one byte of overhead", len(c.data), len(packed))
			}
			got, err := Unpack(packed)
			if err != nil {
				t.Fatalf("Unpack: %v", err)
			}
			if !bytes.Equal(got, c.data) {
				t.Fatalf("round trip changed the document:\n got %q\nwant %q", got, c.data)
			}
		})
	}
}

// Parts are packed as one document.
func TestPartsAreConcatenated(t *testing.T) {
	doc := []byte(memberDeployment)
	packed := Pack("Deployment", Sorted, doc[:1], nil, doc[1:100], doc[100:])
	got, err := Unpack(packed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("got %q, want %q", got, doc)
	}
}

// The stored fallback keeps data that does not compress as it is.
func TestIncompressibleIsStored(t *testing.T) {
	random := make([]byte, 256)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	if packed := Pack("", Sorted, random); packed[0] != stored {
		t.Fatalf("random bytes packed with encoding %d, want stored", packed[0])
	}
}

// Results are the caller's: changing one does not change what is packed.
func TestUnpackReturnsACopy(t *testing.T) {
	for _, data := range [][]byte{[]byte(memberDeployment), []byte(`{}`)} {
		packed := Pack("Deployment", Sorted, data)
		first, err := Unpack(packed)
		if err != nil {
			t.Fatal(err)
		}
		first[0] = 'X'
		second, err := Unpack(packed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(second, data) {
			t.Fatalf("changing one result changed the next: %q", second)
		}
	}
}

func TestUnpackRejectsBadInput(t *testing.T) {
	for name, packed := range map[string][]byte{
		"empty":            nil,
		"unknown encoding": {7, 'x'},
		"truncated":        Pack("Deployment", Sorted, []byte(memberDeployment))[:20],
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Unpack(packed); err == nil {
				t.Fatal("Unpack accepted bad input")
			}
		})
	}
}

// The dictionary is what makes one small object small: a member
// Deployment must pack to under a quarter of its JSON (plain DEFLATE
// leaves 0.46), and a ConfigMap, whose names, uids and timestamps no
// dictionary knows, to under 0.4.
func TestRatio(t *testing.T) {
	for name, c := range map[string]struct {
		kind     string
		form     Form
		doc      string
		maxRatio float64
	}{
		"deployment":               {"Deployment", Sorted, memberDeployment, 0.25},
		"deployment, server order": {"Deployment", Server, serverOrder(t, memberDeployment, &appsv1.Deployment{}), 0.25},
		"deployment, general":      {"", Sorted, memberDeployment, 0.25},
		"configmap":                {"ConfigMap", Sorted, memberConfigMap, 0.40},
		"configmap, server order":  {"ConfigMap", Server, serverOrder(t, memberConfigMap, &corev1.ConfigMap{}), 0.40},
		"configmap, general":       {"", Sorted, memberConfigMap, 0.40},
	} {
		packed := Pack(c.kind, c.form, []byte(c.doc))
		ratio := float64(len(packed)) / float64(len(c.doc))
		t.Logf("%s: %d bytes packed to %d (%.2f)", name, len(c.doc), len(packed), ratio)
		if ratio > c.maxRatio {
			t.Errorf("%s packed to %.2f of its size, want at most %.2f", name, ratio, c.maxRatio)
		}
	}
}

// benchmarkDocs are the documents the benchmarks pack, with their kinds.
func benchmarkDocs(b *testing.B) map[string]struct {
	kind string
	form Form
	doc  string
} {
	return map[string]struct {
		kind string
		form Form
		doc  string
	}{
		"deployment-server": {"Deployment", Server, serverOrder(b, memberDeployment, &appsv1.Deployment{})},
		"deployment-sorted": {"Deployment", Sorted, memberDeployment},
		"configmap-server":  {"ConfigMap", Server, serverOrder(b, memberConfigMap, &corev1.ConfigMap{})},
		"general":           {"", Server, serverOrder(b, memberDeployment, &appsv1.Deployment{})},
	}
}

func BenchmarkPack(b *testing.B) {
	for name, c := range benchmarkDocs(b) {
		b.Run(name, func(b *testing.B) {
			data := []byte(c.doc)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var packed []byte
			for b.Loop() {
				packed = Pack(c.kind, c.form, data)
			}
			b.ReportMetric(float64(len(packed)), "packed-bytes")
		})
	}
}

func BenchmarkUnpack(b *testing.B) {
	for name, c := range benchmarkDocs(b) {
		b.Run(name, func(b *testing.B) {
			data := []byte(c.doc)
			packed := Pack(c.kind, c.form, data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Unpack(packed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
