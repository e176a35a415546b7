package baseline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

var joinOnce sync.Once

// joinFirstMembers joins member1 and member2 once for the package.
func joinFirstMembers(t *testing.T) {
	t.Helper()
	joinOnce.Do(func() {
		for _, m := range []string{"member1", "member2"} {
			join(t, m)
		}
		for _, m := range []string{"member1", "member2"} {
			waitClusterReady(t, m)
		}
	})
}

// join runs atoll join for a simulated member, labelled tier=production
// and member=NAME, and returns its output.
func join(t *testing.T, member string) string {
	t.Helper()
	return world.Atoll(t, "join", member, "--cluster-kubeconfig", filepath.Join(world.DataDir, "members", member, "proxy-kubeconfig"),
		"--labels", "tier=production,member="+member, "--kubeconfig", world.Kubeconfig)
}

func waitClusterReady(t *testing.T, name string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, "cluster "+name+" Ready", func() (bool, string) {
		cl, err := framework.GetCluster(context.Background(), world.Client(t), name)
		if err != nil {
			return false, err.Error()
		}
		return framework.ClusterReadyStatus(cl) == metav1.ConditionTrue, string(framework.ClusterReadyStatus(cl))
	})
}

// applyFile applies a manifest with kubectl, twice if needed: custom
// resources are refused until their CRD is served.
func applyManifest(t *testing.T, manifest string) {
	t.Helper()
	framework.Eventually(t, time.Minute, "manifest applied", func() (bool, string) {
		out, err := world.Kubectl(t, manifest, "apply", "-f", "-")
		return err == nil, out
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func getBaseline(t *testing.T, name string) (*appsv1alpha1.ClusterBaseline, error) {
	t.Helper()
	var cb appsv1alpha1.ClusterBaseline
	err := world.Client(t).Get(context.Background(), client.ObjectKey{Name: name}, &cb)
	return &cb, err
}

// waitBaseline waits until ok holds for the baseline.
func waitBaseline(t *testing.T, name string, timeout time.Duration, what string, ok func(*appsv1alpha1.ClusterBaseline) bool) *appsv1alpha1.ClusterBaseline {
	t.Helper()
	var cb *appsv1alpha1.ClusterBaseline
	framework.Eventually(t, timeout, "baseline "+name+": "+what, func() (bool, string) {
		var err error
		if cb, err = getBaseline(t, name); err != nil {
			return false, err.Error()
		}
		return ok(cb), matrix(cb)
	})
	return cb
}

// deleteBaseline deletes a baseline and waits until it is gone (its
// components withdrawn).
func deleteBaseline(t *testing.T, name string) {
	t.Helper()
	cb, err := getBaseline(t, name)
	if apierrors.IsNotFound(err) {
		return
	}
	if err := world.Client(t).Delete(context.Background(), cb); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "baseline "+name+" withdrawn and gone", func() (bool, string) {
		cb, err := getBaseline(t, name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, matrix(cb)
	})
}

// matrix renders a baseline's status for failure messages.
func matrix(cb *appsv1alpha1.ClusterBaseline) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ready clusters %s", cb.Status.ReadyClusters)
	for _, c := range cb.Status.Conditions {
		fmt.Fprintf(&b, "; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, cs := range cb.Status.Clusters {
		fmt.Fprintf(&b, "\n  %s %s gated=%v:", cs.Name, cs.Ready, cs.Gated)
		for _, c := range cs.Components {
			fmt.Fprintf(&b, " %s=%s", c.Name, c.State)
			if c.Message != "" {
				fmt.Fprintf(&b, "(%s)", c.Message)
			}
		}
	}
	return b.String()
}

// component returns a component's status on a cluster (zero when absent).
func component(cb *appsv1alpha1.ClusterBaseline, cluster, name string) appsv1alpha1.ComponentStatus {
	for _, cs := range cb.Status.Clusters {
		if cs.Name != cluster {
			continue
		}
		for _, c := range cs.Components {
			if c.Name == name {
				return c
			}
		}
	}
	return appsv1alpha1.ComponentStatus{}
}

func clusterStatus(cb *appsv1alpha1.ClusterBaseline, cluster string) appsv1alpha1.BaselineClusterStatus {
	for _, cs := range cb.Status.Clusters {
		if cs.Name == cluster {
			return cs
		}
	}
	return appsv1alpha1.BaselineClusterStatus{}
}

func hasBaselineTaint(cl *clusterv1alpha1.Cluster) bool {
	for _, t := range cl.Spec.Taints {
		if t.Key == appsv1alpha1.BaselineTaintKey {
			return true
		}
	}
	return false
}

// event is one watch event seen in a member, with the object's
// resourceVersion: within one member's etcd, revisions order writes.
type event struct {
	typ watch.EventType
	obj *unstructured.Unstructured
	rv  int64
}

// recorder records a member's watch events of some resources.
type recorder struct {
	mu     sync.Mutex
	events map[schema.GroupVersionResource][]event
}

// record watches each resource in a member (namespace "" for all) until
// the test ends.
func record(t *testing.T, member, namespace string, gvrs ...schema.GroupVersionResource) *recorder {
	t.Helper()
	dc := world.MemberDynamic(t, member)
	rec := &recorder{events: map[schema.GroupVersionResource][]event{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, gvr := range gvrs {
		var ri dynamic.ResourceInterface = dc.Resource(gvr)
		if namespace != "" {
			ri = dc.Resource(gvr).Namespace(namespace)
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watching %s in %s: %v", gvr.Resource, member, err)
		}
		go func() {
			// A CRD change ends the watches of its custom resources (and may
			// make the last revision unusable): list, record what the list
			// shows, and watch again from there, until the test ends.
			for ctx.Err() == nil {
				for e := range w.ResultChan() {
					if u, ok := e.Object.(*unstructured.Unstructured); ok {
						rec.add(gvr, e.Type, u)
					}
				}
				for ctx.Err() == nil {
					list, err := ri.List(ctx, metav1.ListOptions{})
					if err == nil {
						for i := range list.Items {
							rec.add(gvr, watch.Modified, &list.Items[i])
						}
						if w, err = ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}); err == nil {
							break
						}
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	return rec
}

func (r *recorder) add(gvr schema.GroupVersionResource, typ watch.EventType, u *unstructured.Unstructured) {
	rv, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	r.mu.Lock()
	r.events[gvr] = append(r.events[gvr], event{typ: typ, obj: u, rv: rv})
	r.mu.Unlock()
}

// first returns the revision of the first event of gvr named name that
// satisfies ok, 0 when none did.
func (r *recorder) first(gvr schema.GroupVersionResource, name string, ok func(event) bool) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events[gvr] {
		if e.obj.GetName() == name && ok(e) {
			return e.rv
		}
	}
	return 0
}

var (
	crdsGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	pvcsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)
