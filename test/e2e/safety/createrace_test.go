package safety

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestObjectCreatedDuringTheCreateIsLeftAlone: someone creates a member
// object in the moment between atoll's check that it does not exist and
// atoll's create. atoll writes nothing into it, reports the conflict
// (conflictResolution Abort), and leaves it when the template goes. The
// moment is made exact by routing member1 through an HTTP proxy of the
// test that creates the object as it passes atoll's "not found" back.
// Before, atoll's create was a forced server-side apply: it overwrote the
// newcomer and put its ownership record on it, and deleting the template
// then deleted the other's object.
func TestObjectCreatedDuringTheCreateIsLeftAlone(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	const ns, name = "create-race", "app"
	member := world.MemberClientset(t, "member1")
	// The namespace is member1's own: the race is about the ConfigMap.
	world.MustKubectl(t, namespaceYAML(ns), "apply", "-f", "-")
	world.MustKubectl(t, "", "label", "namespace", ns, policyv1alpha1.NamespaceSkipAutoPropagationLabel+"=true")
	if out, err := world.MemberKubectl(t, "member1", namespaceYAML(ns), "apply", "-f", "-"); err != nil {
		t.Fatalf("creating member1's namespace: %v\n%s", err, out)
	}

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "a"}},
		Data: map[string]string{"value": "theirs"}}
	var sprung, seen atomic.Bool
	proxy := racingProxy(t, "/api/v1/namespaces/"+ns+"/configmaps/"+name, &seen, func() error {
		created, err := member.CoreV1().ConfigMaps(ns).Create(context.Background(), theirs, metav1.CreateOptions{FieldManager: "someone"})
		if err == nil {
			theirs = created
			sprung.Store(true)
		}
		return err
	})
	routeThrough(t, "member1", proxy)
	framework.Eventually(t, time.Minute, "atoll reaching member1 through the test's proxy", func() (bool, string) {
		return seen.Load(), "no request yet"
	})

	apply(t, configMapYAML(ns, name, "", "ours")+"---\n"+ppYAML(ns, "cfg", "", "name: "+name, "", "member1"))
	framework.Eventually(t, time.Minute, "the conflict in member1 reported", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, world.Client(t), ns, name+"-configmap")
		if err != nil {
			return false, err.Error()
		}
		if item := framework.AggregatedStatusOf(rb, "member1"); item != nil {
			return !item.Applied && strings.Contains(item.AppliedMessage, "not managed by atoll"),
				fmt.Sprintf("applied %v, message %q, member1's object %v", item.Applied, item.AppliedMessage, memberConfigMap(ctx, t, "member1", ns, name))
		}
		return false, fmt.Sprintf("status %v", rb.Status.AggregatedStatus)
	})
	if !sprung.Load() {
		t.Fatal("the proxy never created the object between atoll's check and its create: the test proved nothing")
	}
	untouched := func() (bool, string) {
		if ok, msg := sameObject(ctx, t, "member1", ns, name, theirs.UID, "value", "theirs")(); !ok {
			return ok, msg
		}
		cm := memberConfigMap(ctx, t, "member1", ns, name)
		if _, owned := ownership.Of(cm); owned || len(cm.Labels) != 1 {
			return false, fmt.Sprintf("atoll's marks on the other's object: labels %v, annotations %v", cm.Labels, cm.Annotations)
		}
		return true, ""
	}
	framework.Consistently(t, 10*time.Second, "the object created during atoll's create untouched", untouched)

	world.MustKubectl(t, "", "delete", "configmap", "-n", ns, name)
	framework.Consistently(t, 10*time.Second, "the other's object still there after the template went", untouched)
}

// racingProxy serves member1's API on a loopback TLS port, passing every
// request through as it is (atoll's own token included). When a GET of
// path answers "not found" it first runs create, once: the object appears
// after atoll looked and before atoll writes. seen turns true at the first
// request.
func racingProxy(t *testing.T, path string, seen *atomic.Bool, create func() error) *httptest.Server {
	t.Helper()
	cfg := world.MemberConfig(t, "member1")
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(&rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{
		CAFile: cfg.CAFile, CAData: cfg.CAData, ServerName: cfg.ServerName}})
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	armed.Store(true)
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport, rp.FlushInterval = transport, -1
	rp.ModifyResponse = func(resp *http.Response) error {
		seen.Store(true)
		if resp.Request.Method == http.MethodGet && resp.Request.URL.Path == path && resp.StatusCode == http.StatusNotFound &&
			armed.CompareAndSwap(true, false) {
			if err := create(); err != nil {
				t.Errorf("creating the racing object: %v", err)
			}
		}
		return nil
	}
	srv := httptest.NewUnstartedServer(rp)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() {
		srv.CloseClientConnections() // watches would hold Close
		srv.Close()
	})
	return srv
}

// routeThrough points the Cluster of member at proxy until the test ends
// (its credentials' issued-for endpoint with it, and without verifying
// the proxy's certificate), then back.
func routeThrough(t *testing.T, member string, proxy *httptest.Server) {
	t.Helper()
	c := world.Client(t)
	point := func(endpoint string, insecure bool) (was string, wasInsecure bool) {
		t.Helper()
		cluster := &clusterv1alpha1.Cluster{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: member}, cluster); err != nil {
			t.Fatal(err)
		}
		ref := cluster.Spec.SecretRef
		secret := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
			t.Fatal(err)
		}
		s := secret.DeepCopy()
		s.Annotations[clusterv1alpha1.CredentialEndpointAnnotation] = endpoint
		cl := cluster.DeepCopy()
		cl.Spec.APIEndpoint, cl.Spec.InsecureSkipTLSVerification = endpoint, insecure
		for _, p := range []struct{ obj, base client.Object }{{s, secret}, {cl, cluster}} {
			if err := c.Patch(context.Background(), p.obj, client.MergeFrom(p.base)); err != nil {
				t.Fatalf("pointing %s at %s: %v", member, endpoint, err)
			}
		}
		return cluster.Spec.APIEndpoint, cluster.Spec.InsecureSkipTLSVerification
	}
	was, wasInsecure := point(proxy.URL, true)
	t.Cleanup(func() {
		point(was, wasInsecure)
		framework.Eventually(t, time.Minute, member+" Ready again at "+was, func() (bool, string) {
			cluster := &clusterv1alpha1.Cluster{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: member}, cluster); err != nil {
				return false, err.Error()
			}
			return meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady), fmt.Sprint(cluster.Status.Conditions)
		})
	})
}
