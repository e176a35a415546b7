package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	t0     = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	window = metav1.Duration{Duration: DefaultWindow}
)

// pod is a small builder for the pods of these tests.
type pod struct{ corev1.Pod }

func makePod(namespace, name string) *pod {
	return &pod{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

func (p *pod) label(k, v string) *pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

func (p *pod) runningOn(node string) *pod {
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

func (p *pod) phase(phase corev1.PodPhase) *pod {
	p.Status.Phase = phase
	return p
}

// container adds container name with requests given as "cpu=100m,memory=64Mi".
func (p *pod) container(name, requests string) *pod {
	c := corev1.Container{Name: name}
	if requests != "" {
		c.Resources.Requests = resources(requests)
	}
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

func (p *pod) obj() *corev1.Pod { return &p.Pod }

func resources(s string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		list[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return list
}

func makeNode(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// fixture is a small cluster: pods with their usage, on nodes n1..n3.
type fixture struct {
	pods  []*corev1.Pod
	usage map[string]corev1.ResourceList // by namespace/name
	nodes []*corev1.Node
}

func newFixture() *fixture {
	return &fixture{
		pods: []*corev1.Pod{
			makePod("default", "web-1").label("app", "web").runningOn("n1").
				container("app", "cpu=100m,memory=64Mi").container("sidecar", "cpu=300m,memory=192Mi").obj(),
			makePod("default", "web-2").label("app", "web").runningOn("n2").container("app", "").obj(),
			makePod("default", "pending").label("app", "web").phase(corev1.PodPending).container("app", "").obj(),
			makePod("default", "unscheduled").label("app", "web").phase(corev1.PodRunning).container("app", "").obj(),
			makePod("kube-system", "dns-1").label("app", "dns").runningOn("n1").container("dns", "cpu=50m").obj(),
			makePod("other", "job-1").runningOn("n2").phase(corev1.PodSucceeded).container("job", "").obj(),
		},
		usage: map[string]corev1.ResourceList{
			"default/web-1":     resources("cpu=401m,memory=256Mi"),
			"default/web-2":     resources("cpu=333m,memory=10Mi"),
			"default/pending":   resources("cpu=1,memory=1Gi"),
			"kube-system/dns-1": resources("cpu=50m"),
			"other/job-1":       resources("cpu=1,memory=1Gi"),
		},
		nodes: []*corev1.Node{
			makeNode("n2", map[string]string{"zone": "b"}),
			makeNode("n1", map[string]string{"zone": "a"}),
			makeNode("n3", map[string]string{"zone": "b"}),
		},
	}
}

func (f *fixture) options() Options {
	return Options{
		Pods: func(namespace string, selector labels.Selector) ([]*corev1.Pod, error) {
			var out []*corev1.Pod
			for _, p := range f.pods {
				if (namespace == "" || p.Namespace == namespace) && selector.Matches(labels.Set(p.Labels)) {
					out = append(out, p)
				}
			}
			return out, nil
		},
		Nodes:    func() ([]*corev1.Node, error) { return f.nodes, nil },
		PodUsage: func(p *corev1.Pod) corev1.ResourceList { return f.usage[p.Namespace+"/"+p.Name] },
		Clock:    clocktesting.NewFakePassiveClock(t0),
	}
}

func containerMetrics(name, usage string) metricsv1beta1.ContainerMetrics {
	return metricsv1beta1.ContainerMetrics{Name: name, Usage: resources(usage)}
}

func podMetrics(namespace, name string, labels map[string]string, containers ...metricsv1beta1.ContainerMetrics) metricsv1beta1.PodMetrics {
	return metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, CreationTimestamp: metav1.NewTime(t0)},
		Timestamp:  metav1.NewTime(t0),
		Window:     window,
		Containers: containers,
	}
}

func nodeMetrics(name string, labels map[string]string, usage string) metricsv1beta1.NodeMetrics {
	return metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(t0)},
		Timestamp:  metav1.NewTime(t0),
		Window:     window,
		Usage:      resources(usage),
	}
}

var (
	web1 = podMetrics("default", "web-1", map[string]string{"app": "web"},
		// 401m split 1:3 is 100.25m and 300.75m: the spare millicore goes
		// to the larger fraction.
		containerMetrics("app", "cpu=100m,memory=64Mi"),
		containerMetrics("sidecar", "cpu=301m,memory=192Mi"))
	web2 = podMetrics("default", "web-2", map[string]string{"app": "web"},
		containerMetrics("app", "cpu=333m,memory=10Mi"))
	dns1 = podMetrics("kube-system", "dns-1", map[string]string{"app": "dns"},
		containerMetrics("dns", "cpu=50m,memory=0"))
	n1 = nodeMetrics("n1", map[string]string{"zone": "a"}, "cpu=451m,memory=256Mi")
	n2 = nodeMetrics("n2", map[string]string{"zone": "b"}, "cpu=333m,memory=10Mi")
	n3 = nodeMetrics("n3", map[string]string{"zone": "b"}, "cpu=0,memory=0")
)

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{Kind: kind, APIVersion: "metrics.k8s.io/v1beta1"}
}

func withKind[T any](m T, set func(*T)) *T {
	set(&m)
	return &m
}

func status(code int32, reason metav1.StatusReason, msg string, details *metav1.StatusDetails) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: msg, Details: details,
	}
}

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestHandler(t *testing.T) {
	metricsGroup := metav1.GroupVersionForDiscovery{GroupVersion: "metrics.k8s.io/v1beta1", Version: "v1beta1"}
	podsNotFound := func(name string) *metav1.Status {
		return status(404, metav1.StatusReasonNotFound, fmt.Sprintf("pods.metrics.k8s.io %q not found", name),
			&metav1.StatusDetails{Name: name, Group: "metrics.k8s.io", Kind: "pods"})
	}
	resourceNotFound := status(404, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
	cases := map[string]struct {
		method   string
		target   string
		wantCode int
		want     any // a pointer to the expected decoded body
	}{
		"group list": {
			target: "/apis", wantCode: 200,
			want: &metav1.APIGroupList{
				TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
				Groups:   []metav1.APIGroup{{Name: "metrics.k8s.io", Versions: []metav1.GroupVersionForDiscovery{metricsGroup}, PreferredVersion: metricsGroup}},
			},
		},
		"group": {
			target: "/apis/metrics.k8s.io", wantCode: 200,
			want: &metav1.APIGroup{
				TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
				Name:     "metrics.k8s.io", Versions: []metav1.GroupVersionForDiscovery{metricsGroup}, PreferredVersion: metricsGroup,
			},
		},
		"resource list": {
			target: "/apis/metrics.k8s.io/v1beta1/", wantCode: 200,
			want: &metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: "metrics.k8s.io/v1beta1",
				APIResources: []metav1.APIResource{
					{Name: "nodes", SingularName: "node", Namespaced: false, Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
					{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "PodMetrics", Verbs: metav1.Verbs{"get", "list"}},
				},
			},
		},
		"pods in all namespaces have metrics when running on a node": {
			target: "/apis/metrics.k8s.io/v1beta1/pods", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{web1, web2, dns1}},
		},
		"pods in a namespace": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{dns1}},
		},
		"pods in an empty namespace": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/nothing/pods", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{}},
		},
		"pods by label selector": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{web1, web2}},
		},
		"pods by set-based label selector": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app+notin+(web)", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{}},
		},
		"pods by field selector": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.name%3Dweb-2", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{web2}},
		},
		"pods by namespace field selector": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace!%3Ddefault", wantCode: 200,
			want: &metricsv1beta1.PodMetricsList{TypeMeta: typeMeta("PodMetricsList"), Items: []metricsv1beta1.PodMetrics{dns1}},
		},
		"bad label selector": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app+in+(", wantCode: 400,
			want: status(400, metav1.StatusReasonBadRequest, "", nil),
		},
		"unsupported field selector": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dn1", wantCode: 400,
			want: status(400, metav1.StatusReasonBadRequest, "", nil),
		},
		"one pod": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-1", wantCode: 200,
			want: withKind(web1, func(m *metricsv1beta1.PodMetrics) { m.TypeMeta = typeMeta("PodMetrics") }),
		},
		"a pending pod has no metrics": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending", wantCode: 404,
			want: podsNotFound("pending"),
		},
		"a pod in another namespace": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/other/pods/web-1", wantCode: 404,
			want: podsNotFound("web-1"),
		},
		"an unknown pod": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope", wantCode: 404,
			want: podsNotFound("nope"),
		},
		"nodes sum the usage of their pods": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes", wantCode: 200,
			want: &metricsv1beta1.NodeMetricsList{TypeMeta: typeMeta("NodeMetricsList"), Items: []metricsv1beta1.NodeMetrics{n1, n2, n3}},
		},
		"nodes by label selector": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db", wantCode: 200,
			want: &metricsv1beta1.NodeMetricsList{TypeMeta: typeMeta("NodeMetricsList"), Items: []metricsv1beta1.NodeMetrics{n2, n3}},
		},
		"nodes by field selector": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3Dn3", wantCode: 200,
			want: &metricsv1beta1.NodeMetricsList{TypeMeta: typeMeta("NodeMetricsList"), Items: []metricsv1beta1.NodeMetrics{n3}},
		},
		"nodes by unsupported field selector": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.namespace%3Dx", wantCode: 400,
			want: status(400, metav1.StatusReasonBadRequest, "", nil),
		},
		"one node": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes/n1", wantCode: 200,
			want: withKind(n1, func(m *metricsv1beta1.NodeMetrics) { m.TypeMeta = typeMeta("NodeMetrics") }),
		},
		"an unknown node": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes/n9", wantCode: 404,
			want: status(404, metav1.StatusReasonNotFound, `nodes.metrics.k8s.io "n9" not found`,
				&metav1.StatusDetails{Name: "n9", Group: "metrics.k8s.io", Kind: "nodes"}),
		},
		"another group": {
			target: "/apis/apps/v1", wantCode: 404, want: resourceNotFound,
		},
		"another version": {
			target: "/apis/metrics.k8s.io/v1/pods", wantCode: 404, want: resourceNotFound,
		},
		"an unknown resource": {
			target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/services", wantCode: 404, want: resourceNotFound,
		},
		"a subresource": {
			target: "/apis/metrics.k8s.io/v1beta1/nodes/n1/status", wantCode: 404, want: resourceNotFound,
		},
		"the core API": {
			target: "/api/v1/pods", wantCode: 404, want: resourceNotFound,
		},
		"writes are not allowed": {
			method: http.MethodPost, target: "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", wantCode: 405,
			want: status(405, metav1.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource", &metav1.StatusDetails{}),
		},
		"watch is not supported": {
			target: "/apis/metrics.k8s.io/v1beta1/pods?watch=true", wantCode: 405,
			want: status(405, metav1.StatusReasonMethodNotAllowed, "watch is not supported by the simulated metrics API", &metav1.StatusDetails{}),
		},
	}
	h := NewHandler(newFixture().options())
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tc.target, nil)
			req.Header.Set("Accept", "application/vnd.kubernetes.protobuf,application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != tc.wantCode {
				t.Errorf("status code = %d, want %d; body: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			got := newLike(tc.want)
			if err := json.Unmarshal(rec.Body.Bytes(), got); err != nil {
				t.Fatalf("decoding %T from %s: %v", got, rec.Body, err)
			}
			opts := []cmp.Option{quantityEqual}
			if s, ok := tc.want.(*metav1.Status); ok && s.Message == "" {
				// Bad requests: the message must name the parameter.
				param := "labelSelector"
				if strings.Contains(tc.target, "fieldSelector") {
					param = "fieldSelector"
				}
				if msg := got.(*metav1.Status).Message; !strings.Contains(msg, param) {
					t.Errorf("message %q does not name %s", msg, param)
				}
				opts = append(opts, cmpopts.IgnoreFields(metav1.Status{}, "Message"))
			}
			if diff := cmp.Diff(tc.want, got, opts...); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// newLike returns a new zero value of the type v points to.
func newLike(v any) any {
	switch v.(type) {
	case *metav1.APIGroupList:
		return &metav1.APIGroupList{}
	case *metav1.APIGroup:
		return &metav1.APIGroup{}
	case *metav1.APIResourceList:
		return &metav1.APIResourceList{}
	case *metricsv1beta1.PodMetricsList:
		return &metricsv1beta1.PodMetricsList{}
	case *metricsv1beta1.PodMetrics:
		return &metricsv1beta1.PodMetrics{}
	case *metricsv1beta1.NodeMetricsList:
		return &metricsv1beta1.NodeMetricsList{}
	case *metricsv1beta1.NodeMetrics:
		return &metricsv1beta1.NodeMetrics{}
	case *metav1.Status:
		return &metav1.Status{}
	}
	panic(fmt.Sprintf("newLike: unexpected %T", v))
}

func TestHealth(t *testing.T) {
	h := NewHandler(newFixture().options())
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if body, _ := io.ReadAll(rec.Body); rec.Code != 200 || string(body) != "ok" {
			t.Errorf("GET %s = %d %q, want 200 \"ok\"", path, rec.Code, body)
		}
	}
}

func TestListErrorsAreInternalErrors(t *testing.T) {
	opts := newFixture().options()
	opts.Pods = func(string, labels.Selector) ([]*corev1.Pod, error) { return nil, errors.New("cache not synced") }
	h := NewHandler(opts)
	for _, path := range []string{"/apis/metrics.k8s.io/v1beta1/pods", "/apis/metrics.k8s.io/v1beta1/nodes/n1"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var got metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if rec.Code != 500 || got.Reason != metav1.StatusReasonInternalError || !strings.Contains(got.Message, "cache not synced") {
			t.Errorf("GET %s = %d %+v, want 500 InternalError naming the cause", path, rec.Code, got)
		}
	}
}

// TestClients reads the API with the clients that use it for real: the
// generated metrics clientset (what the HPA controller and kubectl top use,
// asking for protobuf first) and the discovery client.
func TestClients(t *testing.T) {
	srv := httptest.NewServer(NewHandler(newFixture().options()))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	ctx := context.Background()

	client, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("listing pod metrics: %v", err)
	}
	if diff := cmp.Diff([]metricsv1beta1.PodMetrics{web1, web2}, list.Items, quantityEqual); diff != "" {
		t.Errorf("pod metrics (-want +got):\n%s", diff)
	}
	_, err = client.MetricsV1beta1().PodMetricses("default").Get(ctx, "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("getting an unknown pod: err = %v, want NotFound", err)
	}
	_, err = client.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{LabelSelector: "app in ("})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("listing with a bad selector: err = %v, want BadRequest", err)
	}
	node, err := client.MetricsV1beta1().NodeMetricses().Get(ctx, "n2", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node metrics: %v", err)
	}
	if diff := cmp.Diff(n2.Usage, node.Usage, quantityEqual); diff != "" {
		t.Errorf("node usage (-want +got):\n%s", diff)
	}

	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := disco.ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
	if err != nil {
		t.Fatalf("discovering metrics.k8s.io/v1beta1: %v", err)
	}
	var names []string
	for _, r := range resources.APIResources {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"nodes", "pods"}, names); diff != "" {
		t.Errorf("discovered resources (-want +got):\n%s", diff)
	}
}

func TestSplitProportionally(t *testing.T) {
	cases := map[string]struct {
		total   int64
		weights []int64
		want    []int64
	}{
		"by weight":                {total: 400, weights: []int64{100, 300}, want: []int64{100, 300}},
		"remainder to the largest": {total: 401, weights: []int64{100, 300}, want: []int64{100, 301}},
		"equal without weights":    {total: 10, weights: []int64{0, 0, 0}, want: []int64{4, 3, 3}},
		"zero weight gets nothing": {total: 10, weights: []int64{0, 5}, want: []int64{0, 10}},
		"zero total":               {total: 0, weights: []int64{1, 2}, want: []int64{0, 0}},
		"no containers":            {total: 10, weights: nil, want: []int64{}},
		"large memory does not overflow": {
			total: 64 << 30, weights: []int64{3 << 40, 1 << 40}, want: []int64{48 << 30, 16 << 30},
		},
		"overflowing weights split equally": {
			total: 9, weights: []int64{1 << 62, 1 << 62, 1 << 62, 1 << 62}, want: []int64{3, 2, 2, 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, splitProportionally(tc.total, tc.weights), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("splitProportionally(%d, %v) (-want +got):\n%s", tc.total, tc.weights, diff)
			}
		})
	}
}
