package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	discoveryclient "k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// The API server's admission mapper, built as kube-apiserver builds it
// (a DeferredDiscoveryRESTMapper over a memory-cached discovery client),
// keeps missing a kind the server started serving after it first looked;
// once the plugin has it, Refresh makes the next lookup find the kind. This
// is the restart of the tenancy policies' paramKind (package doc).
func TestRefreshFindsKindServedLater(t *testing.T) {
	var serving atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch r.URL.Path {
		case "/api":
			body = metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}
		case "/api/v1":
			body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1"}
		case "/apis":
			list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList"}}
			if serving.Load() {
				gv := metav1.GroupVersionForDiscovery{GroupVersion: "policy.atoll.dev/v1alpha1", Version: "v1alpha1"}
				list.Groups = []metav1.APIGroup{{Name: "policy.atoll.dev", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}
			}
			body = list
		case "/apis/policy.atoll.dev/v1alpha1":
			body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "policy.atoll.dev/v1alpha1",
				APIResources: []metav1.APIResource{{Name: "tenants", Kind: "Tenant", Verbs: metav1.Verbs{"get", "list", "watch"}}}}
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer srv.Close()
	dc, err := discoveryclient.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	var r Refresher
	if r.Refresh() {
		t.Error("Refresh reported a mapper before the plugin was initialised")
	}
	plugins := admission.NewPlugins()
	r.Register(plugins)
	inits := initializer.New(nil, nil, nil, nil, nil, nil, nil, mapper)
	p, err := plugins.InitPlugin(PluginName, nil, inits)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if p.Handles(op) {
			t.Errorf("the plugin handles %s; it must take part in no admission decision", op)
		}
	}

	tenant := schema.GroupKind{Group: "policy.atoll.dev", Kind: "Tenant"}
	if _, err := mapper.RESTMapping(tenant, "v1alpha1"); err == nil {
		t.Fatal("Tenant mapped before the server served it")
	}
	serving.Store(true)
	if _, err := mapper.RESTMapping(tenant, "v1alpha1"); err == nil {
		t.Fatal("the cached discovery found Tenant without a refresh; the test no longer shows what the plugin is for")
	}
	if !r.Refresh() {
		t.Fatal("Refresh found no mapper to reset")
	}
	m, err := mapper.RESTMapping(tenant, "v1alpha1")
	if err != nil {
		t.Fatalf("Tenant not mapped after Refresh: %v", err)
	}
	if want := (schema.GroupVersionResource{Group: "policy.atoll.dev", Version: "v1alpha1", Resource: "tenants"}); m.Resource != want {
		t.Errorf("Tenant mapped to %v, want %v", m.Resource, want)
	}
}
