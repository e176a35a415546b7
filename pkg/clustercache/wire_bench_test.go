package clustercache

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// benchManagedFields is what a member's managedFields hold for a
// Deployment atoll applied and the member's controllers updated.
var benchManagedFields = []metav1.ManagedFieldsEntry{
	{Manager: "atoll", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:atoll.dev/manifest-hash":{},"f:resourcebinding.karmada.io/name":{},"f:resourcebinding.karmada.io/namespace":{}},"f:labels":{"f:karmada.io/managed":{},"f:resourcebinding.karmada.io/permanent-id":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
	{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Subresource: "status", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)},
}

// BenchmarkWatchDecode decodes a member's watch stream of Deployments into
// what the member informers keep: through client-go's dynamic client and
// the transform the informers had before (unstructured, managedFields
// dropped, marshalled again, packed), and through wire.go.
func BenchmarkWatchDecode(b *testing.B) {
	const events = 1000
	var stream bytes.Buffer
	for i := range events {
		d := mustDeployment(b)
		d.Name = "web-" + string(rune('a'+i%26))
		d.ManagedFields = benchManagedFields
		stream.WriteString(`{"type":"ADDED","object":`)
		stream.Write(mustJSON(b, d))
		stream.WriteString("}\n")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(stream.Bytes())
	}))
	defer srv.Close()
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ctx := context.Background()

	b.Run("client-go+transform", func(b *testing.B) {
		dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
		if err != nil {
			b.Fatal(err)
		}
		var packed int
		for b.Loop() {
			w, err := dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			packed = 0
			for e := range w.ResultChan() {
				u := e.Object.(*unstructured.Unstructured)
				u.SetManagedFields(nil)
				raw, err := u.MarshalJSON()
				if err != nil {
					b.Fatal(err)
				}
				packed += len(jsonpack.Pack(u.GetKind(), jsonpack.Sorted, raw))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*events), "µs/event")
		b.ReportMetric(float64(packed)/events, "packed-bytes/object")
	})
	b.Run("wire", func(b *testing.B) {
		cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
			ContentType: runtime.ContentTypeJSON, AcceptContentTypes: runtime.ContentTypeJSON, NegotiatedSerializer: wireSerializer}}
		client, err := rest.UnversionedRESTClientFor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		lw := (&Member{watchClient: client}).listWatch(gvr)
		var packed int
		for b.Loop() {
			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			packed = 0
			for e := range w.ResultChan() {
				packed += len(e.Object.(*Object).packed)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*events), "µs/event")
		b.ReportMetric(float64(packed)/events, "packed-bytes/object")
	})
}

// BenchmarkMemberCopyHeld decodes a member Deployment (as a watch event
// carries it) into what the member informers keep, b.N times, keeps every
// copy, and reports the heap each holds after a collection: the Object,
// its kept metadata and its packed JSON. Run with -benchtime 20000x.
func BenchmarkMemberCopyHeld(b *testing.B) {
	d := mustDeployment(b)
	d.ManagedFields = benchManagedFields
	raw := mustJSON(b, d)
	utiltesting.ReportHeldBytes(b, "held-bytes/object", func() any {
		o, err := decodeObject(raw)
		if err != nil {
			b.Fatal(err)
		}
		return o
	})
}
