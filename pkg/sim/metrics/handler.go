// Package metrics serves the metrics.k8s.io/v1beta1 API of a simulated member
// cluster, in place of metrics-server. The member's kube-apiserver proxies
// the group to it through an APIService (the aggregation layer), so the real
// HPA controller and `kubectl top` read the usage the simulated world assigns
// to each pod.
//
// Only GET is served, as JSON. Clients built with client-go ask for protobuf
// first ("application/vnd.kubernetes.protobuf,application/json") and decode
// whatever the Content-Type of the answer says, so JSON is enough for the HPA
// controller's resource-metrics client, kubectl and the aggregator.
package metrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/clock"
)

// DefaultWindow is the window reported with every sample: the interval
// metrics-server reports with its default 15s resolution. The HPA controller
// ignores the sample of a pod that turned Ready less than a window before
// the sample's timestamp (during the pod's CPU initialization period).
const DefaultWindow = 15 * time.Second

var (
	groupVersion = metricsv1beta1.SchemeGroupVersion
	podsResource = schema.GroupResource{Group: metricsv1beta1.GroupName, Resource: "pods"}
	nodeResource = schema.GroupResource{Group: metricsv1beta1.GroupName, Resource: "nodes"}
)

// Options are the sources of the metrics served.
type Options struct {
	// Pods lists the pods in namespace ("" for all namespaces) that match
	// selector, typically from an informer's lister. Required.
	Pods func(namespace string, selector labels.Selector) ([]*corev1.Pod, error)
	// Nodes lists all nodes. Required.
	Nodes func() ([]*corev1.Node, error)
	// PodUsage is the whole-pod usage now (cpu and memory); a missing
	// resource counts as zero. Required.
	PodUsage func(pod *corev1.Pod) corev1.ResourceList
	// Clock stamps the samples; the real clock by default.
	Clock clock.PassiveClock
	// Window is the reported sample window; DefaultWindow by default.
	Window time.Duration
}

type handler struct {
	opts Options
}

// NewHandler returns the handler of the metrics.k8s.io/v1beta1 API, its
// discovery documents and /healthz, /readyz and /livez. It panics when a
// required option is missing.
func NewHandler(opts Options) http.Handler {
	if opts.Pods == nil || opts.Nodes == nil || opts.PodUsage == nil {
		panic("metrics.NewHandler: Options.Pods, Options.Nodes and Options.PodUsage are required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	return &handler{opts: opts}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz", "/readyz", "/livez":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte("ok"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeError(w, r, methodNotAllowed("the server does not allow this method on the requested resource"))
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 1 || parts[0] != "apis" {
		h.writeError(w, r, notFound())
		return
	}
	parts = parts[1:]
	switch {
	case len(parts) == 0:
		h.write(w, r, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups:   []metav1.APIGroup{apiGroup()},
		})
		return
	case parts[0] != groupVersion.Group:
		h.writeError(w, r, notFound())
		return
	case len(parts) == 1:
		g := apiGroup()
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		h.write(w, r, http.StatusOK, &g)
		return
	case parts[1] != groupVersion.Version:
		h.writeError(w, r, notFound())
		return
	case len(parts) == 2:
		h.write(w, r, http.StatusOK, apiResourceList())
		return
	}
	if watch := r.URL.Query().Get("watch"); watch == "true" || watch == "1" {
		h.writeError(w, r, methodNotAllowed("watch is not supported by the simulated metrics API"))
		return
	}
	switch rest := parts[2:]; {
	case len(rest) == 1 && rest[0] == "pods":
		h.listPods(w, r, metav1.NamespaceAll)
	case len(rest) == 3 && rest[0] == "namespaces" && rest[1] != "" && rest[2] == "pods":
		h.listPods(w, r, rest[1])
	case len(rest) == 4 && rest[0] == "namespaces" && rest[1] != "" && rest[2] == "pods" && rest[3] != "":
		h.getPod(w, r, rest[1], rest[3])
	case len(rest) == 1 && rest[0] == "nodes":
		h.listNodes(w, r)
	case len(rest) == 2 && rest[0] == "nodes" && rest[1] != "":
		h.getNode(w, r, rest[1])
	default:
		h.writeError(w, r, notFound())
	}
}

func apiGroup() metav1.APIGroup {
	v := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion.String(), Version: groupVersion.Version}
	return metav1.APIGroup{
		Name:             groupVersion.Group,
		Versions:         []metav1.GroupVersionForDiscovery{v},
		PreferredVersion: v,
	}
}

func apiResourceList() *metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list"}
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersion.String(),
		APIResources: []metav1.APIResource{
			{Name: "nodes", SingularName: "node", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
		},
	}
}

// hasMetrics reports whether pod gets metrics: like metrics-server, only
// pods that run on a node do.
func hasMetrics(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && pod.Spec.NodeName != ""
}

func (h *handler) listPods(w http.ResponseWriter, r *http.Request, namespace string) {
	labelSel, fieldSel, err := selectors(r, "metadata.name", "metadata.namespace")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	pods, err := h.opts.Pods(namespace, labelSel)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("listing pods: %w", err)))
		return
	}
	now := h.opts.Clock.Now()
	list := &metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: groupVersion.String()},
		Items:    []metricsv1beta1.PodMetrics{},
	}
	for _, pod := range pods {
		if !hasMetrics(pod) || !fieldSel.Matches(fields.Set{"metadata.name": pod.Name, "metadata.namespace": pod.Namespace}) {
			continue
		}
		list.Items = append(list.Items, h.podMetrics(pod, now))
	}
	slices.SortFunc(list.Items, func(a, b metricsv1beta1.PodMetrics) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	h.write(w, r, http.StatusOK, list)
}

func (h *handler) getPod(w http.ResponseWriter, r *http.Request, namespace, name string) {
	pods, err := h.opts.Pods(namespace, labels.Everything())
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("listing pods: %w", err)))
		return
	}
	for _, pod := range pods {
		if pod.Name == name && pod.Namespace == namespace && hasMetrics(pod) {
			m := h.podMetrics(pod, h.opts.Clock.Now())
			m.TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: groupVersion.String()}
			h.write(w, r, http.StatusOK, &m)
			return
		}
	}
	h.writeError(w, r, apierrors.NewNotFound(podsResource, name))
}

func (h *handler) listNodes(w http.ResponseWriter, r *http.Request) {
	labelSel, fieldSel, err := selectors(r, "metadata.name")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	nodes, usage, err := h.nodesAndUsage()
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	now := h.opts.Clock.Now()
	list := &metricsv1beta1.NodeMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: groupVersion.String()},
		Items:    []metricsv1beta1.NodeMetrics{},
	}
	for _, node := range nodes {
		if !labelSel.Matches(labels.Set(node.Labels)) || !fieldSel.Matches(fields.Set{"metadata.name": node.Name}) {
			continue
		}
		list.Items = append(list.Items, h.nodeMetrics(node, usage[node.Name], now))
	}
	slices.SortFunc(list.Items, func(a, b metricsv1beta1.NodeMetrics) int { return cmp.Compare(a.Name, b.Name) })
	h.write(w, r, http.StatusOK, list)
}

func (h *handler) getNode(w http.ResponseWriter, r *http.Request, name string) {
	nodes, usage, err := h.nodesAndUsage()
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	for _, node := range nodes {
		if node.Name == name {
			m := h.nodeMetrics(node, usage[name], h.opts.Clock.Now())
			m.TypeMeta = metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: groupVersion.String()}
			h.write(w, r, http.StatusOK, &m)
			return
		}
	}
	h.writeError(w, r, apierrors.NewNotFound(nodeResource, name))
}

// usage is the usage of a pod or node in millicores and bytes.
type usage struct {
	milliCPU, memory int64
}

func (h *handler) podUsage(pod *corev1.Pod) usage {
	u := h.opts.PodUsage(pod)
	var res usage
	if q, ok := u[corev1.ResourceCPU]; ok {
		res.milliCPU = max(q.MilliValue(), 0)
	}
	if q, ok := u[corev1.ResourceMemory]; ok {
		res.memory = max(q.Value(), 0)
	}
	return res
}

// nodesAndUsage lists the nodes and sums the usage of the pods with metrics
// on each.
func (h *handler) nodesAndUsage() ([]*corev1.Node, map[string]usage, error) {
	nodes, err := h.opts.Nodes()
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := h.opts.Pods(metav1.NamespaceAll, labels.Everything())
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	perNode := map[string]usage{}
	for _, pod := range pods {
		if !hasMetrics(pod) {
			continue
		}
		u := h.podUsage(pod)
		sum := perNode[pod.Spec.NodeName]
		sum.milliCPU += u.milliCPU
		sum.memory += u.memory
		perNode[pod.Spec.NodeName] = sum
	}
	return nodes, perNode, nil
}

func (h *handler) podMetrics(pod *corev1.Pod, now time.Time) metricsv1beta1.PodMetrics {
	u := h.podUsage(pod)
	containers := pod.Spec.Containers
	cpuWeights := make([]int64, len(containers))
	memWeights := make([]int64, len(containers))
	for i, c := range containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			cpuWeights[i] = q.MilliValue()
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			memWeights[i] = q.Value()
		}
	}
	cpu := splitProportionally(u.milliCPU, cpuWeights)
	mem := splitProportionally(u.memory, memWeights)
	m := metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			Labels:            pod.Labels,
			CreationTimestamp: metav1.NewTime(now),
		},
		Timestamp:  metav1.NewTime(now),
		Window:     metav1.Duration{Duration: h.opts.Window},
		Containers: make([]metricsv1beta1.ContainerMetrics, len(containers)),
	}
	for i, c := range containers {
		m.Containers[i] = metricsv1beta1.ContainerMetrics{
			Name: c.Name,
			Usage: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu[i], resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(mem[i], resource.BinarySI),
			},
		}
	}
	return m
}

func (h *handler) nodeMetrics(node *corev1.Node, u usage, now time.Time) metricsv1beta1.NodeMetrics {
	return metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{
			Name:              node.Name,
			Labels:            node.Labels,
			CreationTimestamp: metav1.NewTime(now),
		},
		Timestamp: metav1.NewTime(now),
		Window:    metav1.Duration{Duration: h.opts.Window},
		Usage: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(u.milliCPU, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(u.memory, resource.BinarySI),
		},
	}
}

// splitProportionally splits total (>= 0) into parts proportional to
// weights, equally when no weight is positive. The parts are whole numbers
// that add up to total: the remainders go, one each, to the parts with the
// largest fractions (the first of equals).
func splitProportionally(total int64, weights []int64) []int64 {
	parts := make([]int64, len(weights))
	if len(weights) == 0 || total <= 0 {
		return parts
	}
	w := make([]uint64, len(weights))
	var sum uint64
	for i, x := range weights {
		if x > 0 {
			w[i] = uint64(x)
		}
		var carry uint64
		if sum, carry = bits.Add64(sum, w[i], 0); carry != 0 {
			sum = 0 // absurd requests: fall back to an equal split
			break
		}
	}
	if sum == 0 {
		for i := range w {
			w[i] = 1
		}
		sum = uint64(len(w))
	}
	rems := make([]uint64, len(w))
	var given uint64
	for i := range w {
		// total*w[i]/sum fits in 64 bits because w[i] <= sum.
		hi, lo := bits.Mul64(uint64(total), w[i])
		q, r := bits.Div64(hi, lo, sum)
		parts[i], rems[i] = int64(q), r
		given += q
	}
	order := make([]int, len(w))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for left, k := uint64(total)-given, 0; left > 0; left, k = left-1, k+1 {
		parts[order[k%len(order)]]++
	}
	return parts
}

// selectors parses the labelSelector and fieldSelector query parameters;
// the field selector may use only the given fields.
func selectors(r *http.Request, allowedFields ...string) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	labelSel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid labelSelector %q: %v", q.Get("labelSelector"), err))
	}
	fieldSel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid fieldSelector %q: %v", q.Get("fieldSelector"), err))
	}
	for _, req := range fieldSel.Requirements() {
		if !slices.Contains(allowedFields, req.Field) {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid fieldSelector %q: field %q is not supported, only %s",
				q.Get("fieldSelector"), req.Field, strings.Join(allowedFields, ", ")))
		}
	}
	return labelSel, fieldSel, nil
}

func notFound() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

func methodNotAllowed(msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Message: msg,
		Details: &metav1.StatusDetails{},
	}}
}

// writeError answers with err's Status, the shape kube-apiserver uses.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var status metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	} else {
		status = apierrors.NewInternalError(err).ErrStatus
	}
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if status.Code >= http.StatusInternalServerError {
		klog.Background().Error(err, "Serving metrics failed", "path", r.URL.Path)
	}
	h.write(w, r, int(status.Code), &status)
}

func (h *handler) write(w http.ResponseWriter, r *http.Request, code int, obj any) {
	var data []byte
	var err error
	if p := r.URL.Query().Get("pretty"); p == "true" || p == "1" {
		data, err = json.MarshalIndent(obj, "", "  ")
	} else {
		data, err = json.Marshal(obj)
	}
	if err != nil {
		klog.Background().Error(err, "Encoding a metrics response failed", "path", r.URL.Path)
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
