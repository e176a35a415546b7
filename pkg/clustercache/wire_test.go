package clustercache

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
	testingutil "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/pkg/util/wire"
)

// A member Deployment as a kube-apiserver writes it: Go struct order,
// managedFields last in metadata.
func memberDeploymentJSON(t *testing.T) []byte {
	return mustJSON(t, mustDeployment(t))
}

func mustDeployment(t testing.TB) *appsv1.Deployment {
	d := testingutil.MakeDeployment("web", "shop").Replicas(2).Obj()
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.UID, d.ResourceVersion, d.Generation = "u-1", "42", 3
	d.Labels = map[string]string{"karmada.io/managed": "true"}
	d.Annotations = map[string]string{
		"resourcebinding.karmada.io/namespace": "shop", "resourcebinding.karmada.io/name": "web-deployment",
		"note": "</script> & \"quoted\"",
	}
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "atoll", Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}}
	d.Status.ReadyReplicas = 2
	return d
}

func TestDecodeObjectAsTheMemberWritesIt(t *testing.T) {
	raw := memberDeploymentJSON(t)
	o, err := decodeObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1", ResourceVersion: "42", Generation: 3}
	if diff := cmp.Diff(wantMeta, metaOf(o)); diff != "" {
		t.Errorf("metadata kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, o.TypeMeta); diff != "" {
		t.Errorf("type (-want +got):\n%s", diff)
	}
	want := map[string]string{"resourcebinding.karmada.io/namespace": "shop", "resourcebinding.karmada.io/name": "web-deployment"}
	if diff := cmp.Diff(want, o.GetAnnotations()); diff != "" {
		t.Errorf("owner annotations (-want +got):\n%s", diff)
	}
	var wantObj map[string]any
	if err := json.Unmarshal(raw, &wantObj); err != nil {
		t.Fatal(err)
	}
	delete(wantObj["metadata"].(map[string]any), "managedFields")
	live, err := o.Unstructured()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mustJSON(t, wantObj), mustJSON(t, live.Object)); diff != "" {
		t.Errorf("decoded object (-want +got):\n%s", diff)
	}
}

// managedFields goes with one comma wherever it is in metadata, and the
// rest stays valid JSON.
func TestDecodeObjectCutsManagedFields(t *testing.T) {
	mf := `"managedFields":[{"manager":"m","fieldsV1":{"f:a":{}}}]`
	cases := map[string]string{
		"last":   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a",` + mf + `},"data":{"k":"v"}}`,
		"first":  `{"kind":"ConfigMap","apiVersion":"v1","metadata":{` + mf + `,"name":"a"},"data":{"k":"v"}}`,
		"middle": `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"uid":"u",` + mf + `,"name":"a"},"data":{"k":"v"}}`,
		"only":   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{` + mf + `},"data":{"k":"v"}}`,
		"spaces": " \n{ \"kind\" : \"ConfigMap\" ,\n \"metadata\" : { \"name\" : \"a\" ,\n " + strings.Replace(mf, ":", " : ", 1) + " \n } , \"data\":{\"k\":\"v\"}}",
		"none":   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := decodeObject([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := jsonpack.Unpack(o.packed)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("kept JSON %s: %v", raw, err)
			}
			meta := got["metadata"].(map[string]any)
			if _, ok := meta["managedFields"]; ok {
				t.Errorf("managedFields kept: %s", raw)
			}
			if got["data"].(map[string]any)["k"] != "v" {
				t.Errorf("data lost: %s", raw)
			}
		})
	}
}

func TestDecodeObjectFields(t *testing.T) {
	cases := map[string]struct {
		in        string
		wantMeta  metav1.ObjectMeta
		wantOwner map[string]string
		wantErr   bool
	}{
		"escaped strings": {
			in:        `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"caf\u00e9","namespace":"shop","annotations":{"resourcebinding.karmada.io/name":"a\u002db","resourcebinding.karmada.io/namespace":"shop"}}}`,
			wantMeta:  metav1.ObjectMeta{Name: "café", Namespace: "shop"},
			wantOwner: map[string]string{"resourcebinding.karmada.io/name": "a-b", "resourcebinding.karmada.io/namespace": "shop"},
		},
		"deleting": {
			in:       `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","generation":7,"deletionTimestamp":"2026-12-04T10:00:00Z"}}`,
			wantMeta: metav1.ObjectMeta{Name: "a", Generation: 7, DeletionTimestamp: ptr.To(metav1.NewTime(time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)))},
		},
		"nulls": {
			in:       `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","generation":null,"deletionTimestamp":null,"annotations":null}}`,
			wantMeta: metav1.ObjectMeta{Name: "a"},
		},
		"annotation not a string": {
			in:       `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","annotations":{"resourcebinding.karmada.io/name":3}}}`,
			wantMeta: metav1.ObjectMeta{Name: "a"},
		},
		"no metadata":       {in: `{"kind":"ConfigMap","apiVersion":"v1"}`, wantErr: true},
		"broken":            {in: `{"kind":"ConfigMap","metadata":{"name":"a"}`, wantErr: true},
		"generation a word": {in: `{"kind":"ConfigMap","metadata":{"generation":"x"}}`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := decodeObject([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantMeta, metaOf(o)); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOwner, o.GetAnnotations()); diff != "" {
				t.Errorf("owner annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeList(t *testing.T) {
	in := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"c1"},"items":[` +
		` {"metadata":{"name":"a","namespace":"shop","managedFields":[]},"data":{"k":"1"}},` +
		`{"metadata":{"name":"b","namespace":"shop"},"data":{"k":"2"}}]}`
	l, err := decodeList([]byte(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if l.ResourceVersion != "77" || l.Continue != "c1" || len(l.Items) != 2 {
		t.Fatalf("list: rv %q continue %q, %d items", l.ResourceVersion, l.Continue, len(l.Items))
	}
	for i, name := range []string{"a", "b"} {
		o := &l.Items[i]
		if o.GetName() != name || o.Kind != "ConfigMap" || o.APIVersion != "v1" {
			t.Errorf("item %d: %s %s %s", i, o.APIVersion, o.Kind, o.GetName())
		}
		u, err := o.Unstructured()
		if err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "ConfigMap" || u.GetAPIVersion() != "v1" {
			t.Errorf("item %d decodes as %s %s", i, u.GetAPIVersion(), u.GetKind())
		}
	}
	empty, err := decodeList([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`), "")
	if err != nil || len(empty.Items) != 0 || empty.ResourceVersion != "5" {
		t.Fatalf("empty list: %+v, %v", empty, err)
	}
}

// A custom resource may have a listKind other than its kind + "List"; the
// caller's kind then names the items.
func TestDecodeListWithItsItemsKind(t *testing.T) {
	in := `{"kind":"WidgetCollection","apiVersion":"example.com/v1","metadata":{},"items":[{"metadata":{"name":"a"}}]}`
	for kind, want := range map[string]string{"": "WidgetCollection", "Widget": "Widget"} {
		l, err := decodeList([]byte(in), kind)
		if err != nil {
			t.Fatal(err)
		}
		u, err := l.Items[0].Unstructured()
		if err != nil {
			t.Fatal(err)
		}
		if l.Items[0].Kind != want || u.GetKind() != want || u.GetAPIVersion() != "example.com/v1" {
			t.Errorf("kind %q: item is %s %s (decodes as %s), want %s", kind, l.Items[0].APIVersion, l.Items[0].Kind, u.GetKind(), want)
		}
	}
}

func TestObjectCodecDecodesStatus(t *testing.T) {
	in := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}`
	got, _, err := objectCodec{}.Decode([]byte(in), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := got.(*metav1.Status)
	if !ok || s.Reason != metav1.StatusReasonExpired || s.Code != 410 {
		t.Fatalf("decoded %#v", got)
	}
}

// A bookmark's object decodes to what the reflector reads to end a
// streamed initial list.
func TestBookmarkDecodes(t *testing.T) {
	var event metav1.WatchEvent
	in := `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}`
	if _, _, err := (wire.WatchEventDecoder{}).Decode([]byte(in), nil, &event); err != nil {
		t.Fatal(err)
	}
	obj, _, err := objectCodec{}.Decode(event.Object.Raw, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := obj.(metav1.Object)
	if event.Type != string(watch.Bookmark) || m.GetResourceVersion() != "9" || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Errorf("bookmark decoded as %s, rv %q, annotations %v", event.Type, m.GetResourceVersion(), m.GetAnnotations())
	}
}

// The list and watch requests carry the informer's options as a
// kube-apiserver reads them (recorded by a loopback server), and their
// answers decode into Objects.
func TestListWatchRequests(t *testing.T) {
	var queries []url.Values
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries, paths = append(queries, r.URL.Query()), append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a","namespace":"shop","resourceVersion":"8"}}}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"shop"}}]}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		ContentType: runtime.ContentTypeJSON, AcceptContentTypes: runtime.ContentTypeJSON, NegotiatedSerializer: wireSerializer}}
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m := &Member{Name: "m", watchClient: client, Mapper: mapper}
	lw := m.listWatch(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	ctx := context.Background()

	list, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 500, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if l := list.(*ObjectList); len(l.Items) != 1 || l.Items[0].GetName() != "a" || l.Items[0].Kind != "Deployment" {
		t.Errorf("list decoded as %+v", l)
	}
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "7", SendInitialEvents: ptr.To(true),
		AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	event := <-w.ResultChan()
	w.Stop()
	if o, ok := event.Object.(*Object); event.Type != watch.Added || !ok || o.GetName() != "a" || o.GetResourceVersion() != "8" {
		t.Errorf("watch event %s %#v", event.Type, event.Object)
	}

	wantPaths := []string{"/apis/apps/v1/deployments", "/apis/apps/v1/deployments"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	want := []url.Values{
		{"labelSelector": {"karmada.io/managed=true"}, "limit": {"500"}, "resourceVersion": {"0"}},
		{"labelSelector": {"karmada.io/managed=true"}, "watch": {"true"}, "resourceVersion": {"7"}, "sendInitialEvents": {"true"},
			"allowWatchBookmarks": {"true"}, "resourceVersionMatch": {"NotOlderThan"}},
	}
	if diff := cmp.Diff(want, queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

// An item without kind, even behind whitespace, gets its list's in its
// bytes, and stays valid JSON.
func TestDecodeTypedObjectAddsTheKind(t *testing.T) {
	o, err := decodeTypedObject([]byte(" \n{\"metadata\":{\"name\":\"a\"},\"data\":{}}"), metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := o.Unstructured()
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "ConfigMap" || u.GetAPIVersion() != "v1" || u.GetName() != "a" {
		t.Fatalf("decoded %v", u.Object)
	}
}
