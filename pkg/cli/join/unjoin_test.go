package join

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/ownership"
)

// TestLetGoReadsAChangedObjectAgain: unjoin deletes the version it listed
// and no other. A member answering the DELETE with a conflict (the object
// changed since the list) makes unjoin read the object again and decide
// again. The member here is an httptest server speaking the metadata API.
func TestLetGoReadsAChangedObjectAgain(t *testing.T) {
	owned := func(rv string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1", ResourceVersion: rv,
				Labels: map[string]string{workv1alpha2.ManagedLabel: "true", workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"},
				Annotations: map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotation: "shop",
					workv1alpha2.ResourceBindingNameAnnotation: "web-configmap"}},
		}
	}
	takenOver := owned("12")
	takenOver.Labels = nil

	cases := map[string]struct {
		// reread is what a GET after the first DELETE's conflict returns
		// (nil: 404).
		reread *metav1.PartialObjectMetadata
		want   cleanupResult
		// wantDeletes are the resourceVersions the DELETEs named.
		wantDeletes []string
	}{
		"taken over since the list: left alone": {reread: &takenOver, want: cleanupResult{foreign: 1}, wantDeletes: []string{"10"}},
		"changed, still atoll's: deleted at its new version": {
			reread: ptr.To(owned("11")), want: cleanupResult{deleted: 1}, wantDeletes: []string{"10", "11"},
		},
		"gone since the list: nothing to do": {wantDeletes: []string{"10"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var deletes []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/namespaces/shop/configmaps/web" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				switch r.Method {
				case http.MethodDelete:
					var opts metav1.DeleteOptions
					if err := json.NewDecoder(r.Body).Decode(&opts); err != nil || opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil {
						t.Errorf("DELETE without a resourceVersion precondition: %+v (%v)", opts, err)
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					mu.Lock()
					deletes = append(deletes, *opts.Preconditions.ResourceVersion)
					mu.Unlock()
					if tc.reread == nil || *opts.Preconditions.ResourceVersion != tc.reread.ResourceVersion {
						writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict)
						return
					}
					writeStatus(w, http.StatusOK, "")
				case http.MethodGet:
					if tc.reread == nil {
						writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound)
						return
					}
					_ = json.NewEncoder(w).Encode(tc.reread)
				default:
					t.Errorf("unexpected %s", r.Method)
				}
			}))
			defer srv.Close()
			meta, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			m := &memberClients{name: "member1", meta: meta}
			rec, _ := ownership.Of(ptr.To(owned("10")))
			check := &ownerCheck{ids: map[ownership.Record]bool{rec: true}}
			o := memberObject{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespaced: true, meta: owned("10")}

			var got cleanupResult
			if err := m.letGo(context.Background(), o, check, memberResources{}, sets.New[types.UID](), &got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("result %+v, want %+v", got, tc.want)
			}
			if diff := cmp.Diff(tc.wantDeletes, deletes); diff != "" {
				t.Errorf("DELETEs' resourceVersions (-want +got):\n%s", diff)
			}
		})
	}
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason) {
	w.WriteHeader(code)
	status := metav1.StatusSuccess
	if code >= 300 {
		status = metav1.StatusFailure
	}
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: status, Code: int32(code), Reason: reason})
}

// TestNamespaceIsKeptWhileAGroupIsUnseen: an owned namespace is handed
// back, not deleted, when an API group of the member did not answer
// discovery: it may hold objects of that group that unjoin cannot list,
// and deleting the namespace would take them once the group is back. The
// member here is an httptest server speaking the metadata API; it fails
// the test on a DELETE or a LIST.
func TestNamespaceIsKeptWhileAGroupIsUnseen(t *testing.T) {
	var patches []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || r.URL.Path != "/api/v1/namespaces/shop" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		patches = append(patches, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	}))
	defer srv.Close()
	meta, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m := &memberClients{name: "member1", meta: meta}
	ns := metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "uid-1", ResourceVersion: "10",
			Labels:      map[string]string{workv1alpha2.ManagedLabel: "true", workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id-1"},
			Annotations: map[string]string{workv1alpha2.ClusterResourceBindingAnnotation: "shop-namespace"}},
	}
	rec, _ := ownership.Of(&ns)
	check := &ownerCheck{ids: map[ownership.Record]bool{rec: true}}
	o := memberObject{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, meta: ns}
	resources := memberResources{
		list:   []memberResource{{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespaced: true}},
		unseen: errors.New("unable to retrieve the complete list of server APIs: broken.atoll.test/v1: stale GroupVersion discovery"),
	}

	var got cleanupResult
	if err := m.letGo(context.Background(), o, check, resources, sets.New[types.UID](), &got); err != nil {
		t.Fatal(err)
	}
	if got.handedBack != 1 || got.deleted != 0 || len(patches) != 1 {
		t.Errorf("result %+v after PATCHes %v, want the namespace handed back by one PATCH", got, patches)
	}
}
