package restart

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// listHolder is an HTTPS proxy in front of a member's API server that can
// hold back every list (and streaming list) of ConfigMaps: a member cache
// on its first list of a kind with tens of thousands of objects, made to
// last as long as the test wants. Everything else passes at once, with the
// member's admin credentials.
type listHolder struct {
	srv *httptest.Server

	mu       sync.Mutex
	hold     chan struct{} // closed (or nil) when lists pass
	waiting  int           // lists held right now
	readsFor map[string]int
}

func newListHolder(t *testing.T, member *rest.Config) *listHolder {
	t.Helper()
	target, err := url.Parse(member.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(member)
	if err != nil {
		t.Fatal(err)
	}
	h := &listHolder{readsFor: map[string]int{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Del("Authorization") // the proxy's own admin identity
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
	}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if name, ok := configMapRead(r.URL.Path); ok {
				h.mu.Lock()
				h.readsFor[name]++
				h.mu.Unlock()
			} else if strings.HasSuffix(r.URL.Path, "/configmaps") && !h.wait(r) {
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	h.srv.StartTLS()
	t.Cleanup(func() {
		// atoll is still running and watching through the proxy: no new
		// connections, the open ones cut, so that Close does not wait for
		// watches to time out.
		h.release()
		_ = h.srv.Listener.Close()
		h.srv.CloseClientConnections()
		h.srv.Close()
	})
	return h
}

// configMapRead reports a GET of one named ConfigMap.
func configMapRead(path string) (string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// api/v1/namespaces/NS/configmaps/NAME
	if len(parts) == 6 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "configmaps" {
		return parts[5], true
	}
	return "", false
}

// wait holds a list until release; false when the client gave up.
func (h *listHolder) wait(r *http.Request) bool {
	h.mu.Lock()
	hold := h.hold
	if hold != nil {
		h.waiting++
	}
	h.mu.Unlock()
	if hold == nil {
		return true
	}
	defer func() {
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}()
	select {
	case <-hold:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (h *listHolder) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold == nil {
		h.hold = make(chan struct{})
	}
}

func (h *listHolder) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold != nil {
		close(h.hold)
		h.hold = nil
	}
}

func (h *listHolder) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

func (h *listHolder) reads(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.readsFor[name]
}

// kubeconfig is a kubeconfig for the proxy (its own CA, no credentials:
// the proxy adds the member's).
func (h *listHolder) kubeconfig(t *testing.T) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: proxy
  user: {}
contexts:
- name: proxy
  context: {cluster: proxy, user: proxy}
current-context: proxy
`, h.srv.URL, filepath.Join(filepath.Dir(path), "ca.crt"))
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNewWorkWhileAMemberCacheLists: after a restart, a member cache's
// first list of a kind can take minutes when the member holds tens of
// thousands of objects. Work the restart finds done waits for that list
// (so nothing is written, and the member is not read object by object),
// but a template created meanwhile is read from the member directly and
// reaches it at once; once the list is in, nothing is written twice.
func TestNewWorkWhileAMemberCacheLists(t *testing.T) {
	const lns = "listing"
	cp := framework.StartControlPlane(t, framework.Options{Members: 2, Args: []string{"--member-args=--api-only"}})
	c := cp.Client(t)
	member2 := cp.MemberClientset(t, "member2")
	holder := newListHolder(t, cp.MemberConfig(t, "member2"))
	// member2 joined again, now reached through the holder.
	cp.Atoll(t, "join", "member2", "--cluster-kubeconfig", holder.kubeconfig(t), "--kubeconfig", cp.Kubeconfig)
	framework.Eventually(t, 2*time.Minute, "member2 Ready through the proxy", func() (bool, string) {
		cl, err := framework.GetCluster(t.Context(), c, "member2")
		if err != nil {
			return false, err.Error()
		}
		return cl.Spec.APIEndpoint == holder.srv.URL && framework.ClusterReadyStatus(cl) == metav1.ConditionTrue,
			fmt.Sprintf("endpoint %s, Ready %s", cl.Spec.APIEndpoint, framework.ClusterReadyStatus(cl))
	})

	framework.Create(t, c, utiltesting.MakeNamespace(lns).Obj(),
		utiltesting.MakePropagationPolicy("all", lns).ClusterNames("member1", "member2").Select("v1", "ConfigMap", "").Obj(),
		configMap(lns, "done"))
	inMember2 := func(name string) string {
		cm, err := member2.CoreV1().ConfigMaps(lns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.ResourceVersion
	}
	framework.Eventually(t, 2*time.Minute, "ConfigMap done in member2, its binding applied", func() (bool, string) {
		rb, err := framework.GetBinding(t.Context(), c, lns, "done-configmap")
		if err != nil {
			return false, err.Error()
		}
		item := framework.AggregatedStatusOf(rb, "member2")
		return inMember2("done") != "" && item != nil && item.Applied, fmt.Sprintf("status %+v", rb.Status.AggregatedStatus)
	})
	time.Sleep(5 * time.Second) // coalesced status writes land
	doneVersion := inMember2("done")

	holder.start()
	cp.Fault(t, "control-plane", "stop")
	cp.Fault(t, "control-plane", "start --wait 2m")
	framework.Eventually(t, 2*time.Minute, "the restarted executor's first list of ConfigMaps in member2, held", func() (bool, string) {
		return holder.held() > 0, fmt.Sprintf("%d held", holder.held())
	})
	readsBefore := holder.reads("done")

	created := time.Now()
	framework.Create(t, c, configMap(lns, "fresh"))
	framework.Eventually(t, 90*time.Second, "the new ConfigMap in member2 while its list is held", func() (bool, string) {
		return inMember2("fresh") != "", "not there"
	})
	t.Logf("new ConfigMap in member2 %s after its create, with the member's list held", time.Since(created).Round(time.Millisecond))
	if holder.held() == 0 {
		t.Fatal("the list was not held while the new ConfigMap propagated: the test proves nothing")
	}
	if n := holder.reads("done") - readsBefore; n != 0 {
		t.Errorf("ConfigMap done, applied before the restart, was read from member2 %d times while the list was held; want 0 (it waits for the cache)", n)
	}

	holder.release()
	framework.Eventually(t, 2*time.Minute, "both bindings applied to member2 once the list is in", func() (bool, string) {
		var msgs []string
		for _, name := range []string{"done", "fresh"} {
			rb, err := framework.GetBinding(t.Context(), c, lns, name+"-configmap")
			if err != nil {
				return false, err.Error()
			}
			if item := framework.AggregatedStatusOf(rb, "member2"); item == nil || !item.Applied {
				msgs = append(msgs, fmt.Sprintf("%s: %+v", name, rb.Status.AggregatedStatus))
			}
		}
		return len(msgs) == 0, strings.Join(msgs, "; ")
	})
	freshVersion := inMember2("fresh")
	time.Sleep(5 * time.Second) // the cache's events for both have been handled
	if v := inMember2("done"); v != doneVersion {
		t.Errorf("ConfigMap done written in member2 by the restart: resourceVersion %s -> %s", doneVersion, v)
	}
	if v := inMember2("fresh"); v != freshVersion {
		t.Errorf("ConfigMap fresh written again once the list was in: resourceVersion %s -> %s", freshVersion, v)
	}
}

func configMap(ns, name string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": name}}
}
