package wire

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingjson"
)

// Two bindings as the control plane served them (managedFields included):
// a Deployment's with replicas, placement and aggregated status, and a
// ConfigMap's.
func fixtures(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range []string{"resourcebinding-deployment.json", "resourcebinding-configmap.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.TrimSpace(b))
	}
	return out
}

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := workv1alpha2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(s, workv1alpha2.SchemeGroupVersion)
	return s
}

// serve answers every request with body and code.
func serve(t testing.TB, code int, body []byte) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// clients returns client-go's (as controller-runtime's informers build it)
// and wire's client for ResourceBindings on cfg, with fast.
func clients(t testing.TB, cfg *rest.Config, fast Fast) (clientGo, ours rest.Interface) {
	t.Helper()
	s := testScheme(t)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clientGo, err = apiutil.RESTClientForGVK(workv1alpha2.SchemeGroupVersion.WithKind("ResourceBinding"), false, false, cfg, serializer.NewCodecFactory(s), hc)
	if err != nil {
		t.Fatal(err)
	}
	ours, err = NewTypedClient(cfg, hc, workv1alpha2.SchemeGroupVersion, s, fast)
	if err != nil {
		t.Fatal(err)
	}
	return clientGo, ours
}

func listWatches(t testing.TB, cfg *rest.Config, fast Fast) (clientGo, ours *cache.ListWatch) {
	t.Helper()
	cg, w := clients(t, cfg, fast)
	newList := func() runtime.Object { return &workv1alpha2.ResourceBindingList{} }
	return NewListWatch(cg, "resourcebindings", newList, runtime.NewParameterCodec(testScheme(t))),
		NewListWatch(w, "resourcebindings", newList, runtime.NewParameterCodec(testScheme(t)))
}

// withoutManagedFields is what wire's decode must equal: client-go's
// result less managedFields.
func withoutManagedFields(obj runtime.Object) runtime.Object {
	obj = obj.DeepCopyObject()
	switch o := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		o.ManagedFields = nil
	case *workv1alpha2.ResourceBindingList:
		for i := range o.Items {
			o.Items[i].ManagedFields = nil
		}
	}
	return obj
}

func drain(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	defer w.Stop()
	var events []watch.Event
	for e := range w.ResultChan() {
		events = append(events, e)
	}
	return events
}

// TestWatchDecodesAsClientGo runs with and without the bindings' fast
// decoder (pkg/util/bindingjson), which decodes the watch events' bindings.
func TestWatchDecodesAsClientGo(t *testing.T) {
	for name, fast := range map[string]Fast{"reflective": nil, "bindingjson": bindingjson.Decode} {
		t.Run(name, func(t *testing.T) { testWatchDecodesAsClientGo(t, fast) })
	}
}

func testWatchDecodesAsClientGo(t *testing.T, fast Fast) {
	fx := fixtures(t)
	var stream bytes.Buffer
	fmt.Fprintf(&stream, `{"type":"ADDED","object":%s}`+"\n", fx[0])
	fmt.Fprintf(&stream, ` {"type":"MODIFIED","object":%s}`+"\n", fx[1])
	// As an API server writes keys: type first is not promised.
	fmt.Fprintf(&stream, `{"object":%s,"type":"DELETED"}`+"\n", fx[0])
	stream.WriteString(`{"type":"BOOKMARK","object":{"kind":"ResourceBinding","apiVersion":"work.karmada.io/v1alpha2","metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n")
	stream.WriteString(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}}` + "\n")

	cg, ours := listWatches(t, serve(t, http.StatusOK, stream.Bytes()), fast)
	ctx := context.Background()
	wcg, err := cg.WatchWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := drain(t, wcg)
	w, err := ours.WatchWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, w)
	if len(want) != 5 {
		t.Fatalf("client-go decoded %d events, want 5: %v", len(want), want)
	}
	if len(got) != len(want) {
		t.Fatalf("decoded %d events, client-go %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Type != want[i].Type {
			t.Errorf("event %d: type %s, client-go %s", i, got[i].Type, want[i].Type)
		}
		if diff := cmp.Diff(withoutManagedFields(want[i].Object), got[i].Object); diff != "" {
			t.Errorf("event %d (%s) differs from client-go's less managedFields (-client-go +wire):\n%s", i, want[i].Type, diff)
		}
	}
	if rb := want[0].Object.(*workv1alpha2.ResourceBinding); len(rb.ManagedFields) == 0 {
		t.Fatal("fixture has no managedFields: the test would not show they are cut")
	}
}

func TestListDecodesAsClientGo(t *testing.T) {
	fx := fixtures(t)
	for _, tc := range []struct{ name, list string }{
		// Custom resources' lists come with sorted keys and typed items.
		{"sorted keys", `{"apiVersion":"work.karmada.io/v1alpha2","items":[%s,%s],"kind":"ResourceBindingList","metadata":{"continue":"abc","resourceVersion":"77"}}`},
		{"kind first", `{"kind":"ResourceBindingList","apiVersion":"work.karmada.io/v1alpha2","metadata":{"resourceVersion":"77"},"items":[%s,%s]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg, ours := listWatches(t, serve(t, http.StatusOK, fmt.Appendf(nil, tc.list, fx[0], fx[1])), bindingjson.Decode)
			ctx := context.Background()
			want, err := cg.ListWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ours.ListWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got.(*workv1alpha2.ResourceBindingList).Items); n != 2 {
				t.Fatalf("%d items, want 2", n)
			}
			if diff := cmp.Diff(withoutManagedFields(want), got); diff != "" {
				t.Errorf("list differs from client-go's less managedFields (-client-go +wire):\n%s", diff)
			}
		})
	}
}

func TestErrorsDecodeAsClientGo(t *testing.T) {
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourcebindings.work.karmada.io \"x\" not found","reason":"NotFound","details":{"name":"x","group":"work.karmada.io","kind":"resourcebindings"},"code":404}`
	_, ours := clients(t, serve(t, http.StatusNotFound, []byte(status)), bindingjson.Decode)
	err := ours.Get().Resource("resourcebindings").Namespace("default").Name("x").Do(context.Background()).Into(&workv1alpha2.ResourceBinding{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `"x" not found`) {
		t.Fatalf("got %v, want the server's NotFound", err)
	}
}

func TestBadDocumentsAreRefused(t *testing.T) {
	d := NewTypedSerializer(testScheme(t), nil).Objects
	for _, tc := range []struct{ name, doc, want string }{
		{"not an object", `[1]`, "want '{'"},
		{"cut short", `{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{"managedFields":[]`, "unexpected end"},
		{"no kind", `{"apiVersion":"work.karmada.io/v1alpha2"}`, "no kind"},
		{"unknown kind", `{"apiVersion":"work.karmada.io/v1alpha2","kind":"Nope"}`, "Nope"},
		{"bad field", `{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","spec":{"replicas":"three"}}`, "replicas"},
		{"wrong target", `{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding"}`, "into *v1alpha2.ClusterResourceBinding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var into runtime.Object
			if tc.name == "wrong target" {
				into = &workv1alpha2.ClusterResourceBinding{}
			}
			_, _, err := d.Decode([]byte(tc.doc), nil, into)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestDecodeReportsTheKind: the kind Decode reports, with and without
// the bindings' fast decoder, for a binding and for an error Status.
func TestDecodeReportsTheKind(t *testing.T) {
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Expired","code":410}`
	for name, fast := range map[string]Fast{"reflective": nil, "bindingjson": bindingjson.Decode} {
		d := NewTypedSerializer(testScheme(t), fast).Objects
		for _, tc := range []struct {
			doc  []byte
			want schema.GroupVersionKind
		}{
			{fixtures(t)[0], workv1alpha2.SchemeGroupVersion.WithKind("ResourceBinding")},
			{[]byte(status), metav1.SchemeGroupVersion.WithKind("Status")},
		} {
			obj, gvk, err := d.Decode(tc.doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if *gvk != tc.want || !obj.GetObjectKind().GroupVersionKind().Empty() {
				t.Errorf("%s: decoded %T as %v with kind %v set; want %v and none set", name, obj, *gvk, obj.GetObjectKind().GroupVersionKind(), tc.want)
			}
		}
	}
}

func TestDecodeIntoResetsTarget(t *testing.T) {
	d := NewTypedSerializer(testScheme(t), nil).Objects
	into := &workv1alpha2.ResourceBinding{Spec: workv1alpha2.ResourceBindingSpec{Replicas: 9, SchedulerName: "old"}}
	obj, _, err := d.Decode(fixtures(t)[1], nil, into)
	if err != nil {
		t.Fatal(err)
	}
	rb := obj.(*workv1alpha2.ResourceBinding)
	if rb != into || rb.Spec.Replicas != 0 || rb.Spec.SchedulerName != "default-scheduler" || rb.ManagedFields != nil || rb.Kind != "" {
		t.Fatalf("decoded %+v into %p; want into reset, filled, no managedFields and no kind", rb.Spec, rb)
	}
}

// BenchmarkWatchDecode decodes a watch stream of 1,000 bindings (half a
// Deployment's, half a ConfigMap's) through client-go's typed client, as
// the controller-runtime cache's informers did, and through wire's,
// reflective and with the bindings' fast decoder.
func BenchmarkWatchDecode(b *testing.B) {
	fx := fixtures(b)
	var stream bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&stream, `{"type":"ADDED","object":%s}`+"\n", fx[i%2])
	}
	cfg := serve(b, http.StatusOK, stream.Bytes())
	cg, ours := listWatches(b, cfg, nil)
	_, fast := listWatches(b, cfg, bindingjson.Decode)
	for _, tc := range []struct {
		name string
		lw   *cache.ListWatch
	}{{"client-go", cg}, {"wire", ours}, {"wire-bindingjson", fast}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(stream.Len()))
			b.ReportAllocs()
			for b.Loop() {
				w, err := tc.lw.WatchWithContext(context.Background(), metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for range w.ResultChan() {
					n++
				}
				if n != 1000 {
					b.Fatalf("%d events", n)
				}
			}
		})
	}
}

func TestWatchEventDecoder(t *testing.T) {
	cases := map[string]struct {
		in       string
		wantType watch.EventType
		wantObj  string
	}{
		"added":   {in: `{"type":"ADDED","object":{"kind":"ConfigMap"}}`, wantType: watch.Added, wantObj: `{"kind":"ConfigMap"}`},
		"spaces":  {in: "{ \"object\" : {\"kind\":\"ConfigMap\"} ,\n \"type\" : \"MODIFIED\" }\n", wantType: watch.Modified, wantObj: `{"kind":"ConfigMap"}`},
		"escaped": {in: `{"type":"DEL\u0045TED","object":{}}`, wantType: watch.Deleted, wantObj: `{}`},
		"unknown": {in: `{"type":"SOMETHING","object":{}}`, wantType: "SOMETHING", wantObj: `{}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var event metav1.WatchEvent
			if _, _, err := (WatchEventDecoder{}).Decode([]byte(tc.in), nil, &event); err != nil {
				t.Fatal(err)
			}
			if event.Type != string(tc.wantType) || string(event.Object.Raw) != tc.wantObj {
				t.Errorf("decoded %q %s, want %q %s", event.Type, event.Object.Raw, tc.wantType, tc.wantObj)
			}
		})
	}
	if _, _, err := (WatchEventDecoder{}).Decode([]byte(`{"type":"ADDED"`), nil, &metav1.WatchEvent{}); err == nil {
		t.Error("a broken event decoded")
	}
}
