package clustercache

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A member whose first list has not answered yet is "listing" for the
// grace period, then a failure like any other; once listed it is neither.
func TestMemberListing(t *testing.T) {
	release := make(chan struct{})
	var released bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			// No streaming list here: the reflector falls back to a list.
			http.Error(w, "streaming lists are not served", http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("watch") == "" {
			select { // the list: as slow as a member with many objects
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`))
			return
		}
		<-r.Context().Done() // the watch: nothing happens
	}))
	defer srv.Close()
	defer func() {
		if !released {
			close(release)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &Cache{root: ctx}
	c.opts.defaults()
	m, err := c.newMember("m1", "k", &rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if m.Listing(gvr, time.Hour) {
		t.Fatal("a resource not watched is listing")
	}
	if _, err := m.Watch(gvr, nil); err != nil {
		t.Fatal(err)
	}
	if !m.Listing(gvr, time.Hour) {
		t.Error("a watch whose first list has not answered is not listing")
	}
	if m.Listing(gvr, 0) {
		t.Error("past the grace period, an unanswered list still counts as listing")
	}
	close(release)
	released = true
	if !cache.WaitForCacheSync(ctxTimeout(t, 10*time.Second), func() bool { return m.HasSynced(gvr) }) {
		t.Fatal("the informer did not sync once the list answered")
	}
	if m.Listing(gvr, time.Hour) {
		t.Error("a synced watch is still listing")
	}
}

func ctxTimeout(t *testing.T, d time.Duration) <-chan struct{} {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx.Done()
}
