package executor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/templatecache"
)

// The template list asks for each policy kind's claimed templates, follows
// the pages, and files each template under its binding's key and its own
// resourceVersion, with its kind (list items carry none) and without
// managedFields.
func TestTemplateListFillsTheCache(t *testing.T) {
	pages := map[string]string{ // by label selector and continue token
		names.ClaimLabels[0] + "|": `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"continue":"p2"},"items":[` +
			`{"metadata":{"name":"web","namespace":"shop","resourceVersion":"11","managedFields":[{"manager":"kubectl"}]},"spec":{"replicas":2}}]}`,
		names.ClaimLabels[0] + "|p2": `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[` +
			`{"metadata":{"name":"api","namespace":"shop","resourceVersion":"12"},"spec":{"replicas":3}}]}`,
		names.ClaimLabels[1] + "|": `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[` +
			`{"metadata":{"name":"db","namespace":"ops","resourceVersion":"13"},"spec":{"replicas":1}}]}`,
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		key := q.Get("labelSelector") + "|" + q.Get("continue")
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+key)
		mu.Unlock()
		page, ok := pages[key]
		if !ok || q.Get("limit") != "500" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	client, err := clustercache.NewWireClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cache := templatecache.New()
	l := newTemplateLists(context.Background(), client, cache, nil)
	n, err := l.list(context.Background(), schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || cache.Len() != 3 || len(asked) != 3 {
		t.Fatalf("listed %d, cached %d, after requests %v", n, cache.Len(), asked)
	}
	for _, want := range []struct{ ns, name, rv string }{{"shop", "web", "11"}, {"shop", "api", "12"}, {"ops", "db", "13"}} {
		key := types.NamespacedName{Namespace: want.ns, Name: names.BindingName("Deployment", want.name)}
		got, ok := cache.Get(key, want.rv)
		if !ok {
			t.Errorf("%s: not cached under resourceVersion %s", key, want.rv)
			continue
		}
		if got.GetKind() != "Deployment" || got.GetAPIVersion() != "apps/v1" || got.GetName() != want.name || got.GetManagedFields() != nil {
			t.Errorf("%s: cached as %s %s %s, managedFields %v", key, got.GetAPIVersion(), got.GetKind(), got.GetName(), got.GetManagedFields())
		}
	}
}
