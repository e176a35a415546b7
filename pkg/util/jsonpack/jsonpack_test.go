package jsonpack

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
)

// memberDeployment is a member copy as the executor's informers hold it: a
// defaulted Deployment with atoll's labels and annotations and a status.
const memberDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"1","propagationpolicy.karmada.io/name":"web-pp","propagationpolicy.karmada.io/namespace":"shop","resourcebinding.karmada.io/name":"checkout-deployment","resourcebinding.karmada.io/namespace":"shop","resourcetemplate.karmada.io/generation":"3"},"creationTimestamp":"2026-12-03T21:14:05Z","generation":2,"labels":{"app":"checkout","atoll.dev/managed":"true","propagationpolicy.karmada.io/permanent-id":"5f0c2a9e-6f43-4f5e-9a51-1c8e7b3d2f10","resourcebinding.karmada.io/permanent-id":"a3d1e5c7-0b2f-4c8d-9e6a-7f1b2c3d4e5f"},"name":"checkout","namespace":"shop","resourceVersion":"48213","uid":"0c9e8f7a-6b5d-4c3e-2f1a-0b9c8d7e6f5a"},"spec":{"progressDeadlineSeconds":600,"replicas":3,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"checkout"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"checkout"}},"spec":{"containers":[{"image":"registry.example.com/shop/checkout:1.42.0","imagePullPolicy":"IfNotPresent","name":"checkout","ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"requests":{"cpu":"250m","memory":"256Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{"availableReplicas":3,"conditions":[{"lastTransitionTime":"2026-12-03T21:14:07Z","lastUpdateTime":"2026-12-03T21:14:07Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"},{"lastTransitionTime":"2026-12-03T21:14:05Z","lastUpdateTime":"2026-12-03T21:14:07Z","message":"ReplicaSet \"checkout-6d8f7b9c5d\" has successfully progressed.","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"}],"observedGeneration":2,"readyReplicas":3,"replicas":3,"updatedReplicas":3}}`

const memberConfigMap = `{"apiVersion":"v1","data":{"LOG_LEVEL":"info"},"kind":"ConfigMap","metadata":{"annotations":{"propagationpolicy.karmada.io/name":"web-pp","propagationpolicy.karmada.io/namespace":"shop","resourcebinding.karmada.io/name":"settings-configmap","resourcebinding.karmada.io/namespace":"shop","resourcetemplate.karmada.io/generation":"1"},"creationTimestamp":"2026-12-03T21:14:05Z","labels":{"atoll.dev/managed":"true","propagationpolicy.karmada.io/permanent-id":"5f0c2a9e-6f43-4f5e-9a51-1c8e7b3d2f10","resourcebinding.karmada.io/permanent-id":"b4e2f6d8-1c3a-4d9e-8f7b-6a5c4d3e2f1b"},"name":"settings","namespace":"shop","resourceVersion":"48214","uid":"1d0f9e8b-7c6e-4d5f-3a2b-1c0d9e8f7a6b"}}`

func TestRoundTrip(t *testing.T) {
	random := make([]byte, 4096)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"deployment": []byte(memberDeployment),
		"configmap":  []byte(memberConfigMap),
		"tiny":       []byte(`{}`),
		"empty":      {},
		"random":     random,
		"large":      []byte(strings.Repeat(memberDeployment, 50)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			packed := Pack(data)
			if len(packed) > len(data)+1 {
				t.Fatalf("packed %d bytes into %d: more than one byte of overhead", len(data), len(packed))
			}
			got, err := Unpack(packed)
			if err != nil {
				t.Fatalf("Unpack: %v", err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("round trip changed the document:\n got %q\nwant %q", got, data)
			}
		})
	}
}

// The stored fallback keeps data that does not compress as it is.
func TestIncompressibleIsStored(t *testing.T) {
	random := make([]byte, 256)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	if packed := Pack(random); packed[0] != stored {
		t.Fatalf("random bytes packed with encoding %d, want stored", packed[0])
	}
}

// Results are the caller's: changing one does not change what is packed.
func TestUnpackReturnsACopy(t *testing.T) {
	for _, data := range [][]byte{[]byte(memberDeployment), []byte(`{}`)} {
		packed := Pack(data)
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
		"truncated":        Pack([]byte(memberDeployment))[:20],
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
		doc      string
		maxRatio float64
	}{
		"deployment": {memberDeployment, 0.25},
		"configmap":  {memberConfigMap, 0.40},
	} {
		packed := Pack([]byte(c.doc))
		ratio := float64(len(packed)) / float64(len(c.doc))
		t.Logf("%s: %d bytes packed to %d (%.2f)", name, len(c.doc), len(packed), ratio)
		if ratio > c.maxRatio {
			t.Errorf("%s packed to %.2f of its size, want at most %.2f", name, ratio, c.maxRatio)
		}
	}
}

func BenchmarkPack(b *testing.B) {
	data := []byte(memberDeployment)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Pack(data)
	}
}

func BenchmarkUnpack(b *testing.B) {
	data := []byte(memberDeployment)
	packed := Pack(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unpack(packed); err != nil {
			b.Fatal(err)
		}
	}
}
