package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/atoll-dev/atoll/pkg/sim/world"
	"github.com/atoll-dev/atoll/test/framework"
)

// Workload of BenchmarkStatusChurn.
const (
	churnWorkloads = 300
	churnPeriod    = 5 * time.Second // the world's load changes this often
	churnDuration  = 90 * time.Second
	// churnLow and churnHigh alternate per workload: demands of 4 and 8
	// pods at the HPAs' 50% target over 100m requests.
	churnLow, churnHigh = 200, 400
)

// BenchmarkStatusChurn: runtime status must never make control-plane
// objects hot (issue 14, item 3). `atoll up` with two full members, 300
// Deployments with HPAs (the rebalance benchmark's shapes: 6 replicas of
// 100m, HPA 2..12 at 50% CPU) Divided 1:1; once settled, the world's load
// on every workload alternates between 200m and 400m every 5 s for 90 s, so
// member HPAs and Deployments change status all the time. Reported:
//
//   - member-status-changes: status changes of the member Deployments and
//     HPAs in both members during the churn (informer updates whose status
//     differs);
//   - cp-writes/member-change: control-plane writes (Leases and Events
//     excluded) in the same time, divided by member-status-changes (target
//     at most 0.1);
//   - binding-status-writes/binding/window: binding status writes per
//     binding per coalescing window (--binding-status-coalesce-window, 3 s
//     by default; ATOLL_BENCH_CHURN_WINDOW overrides it), target at most 1;
//   - window-violations: two status writes of one binding closer than the
//     window whose second is not an urgent change (clusters, Applied,
//     Health, FullyApplied, an observed generation); 0 expected.
//
// Run it with:
//
//	ATOLL_BIN=$PWD/bin/atoll go test -run '^$' -bench StatusChurn -benchtime 1x -timeout 40m ./bench/ -v
//
// ATOLL_BENCH_ARGS adds `atoll up` flags (space-separated).
func BenchmarkStatusChurn(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runStatusChurn(b)
	}
}

func runStatusChurn(b *testing.B) {
	window := 3 * time.Second
	args := []string{rblMemberArgs, "--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s"}
	if v := envDuration(b, "ATOLL_BENCH_CHURN_WINDOW"); v > 0 {
		window = v
		args = append(args, "--binding-status-coalesce-window="+v.String())
	}
	args = append(args, strings.Fields(os.Getenv("ATOLL_BENCH_ARGS"))...) // more `atoll up` flags, as for W1
	metricsAddr := framework.FreeLoopbackAddr(b)
	args = append(args, "--metrics-bind-address="+metricsAddr)
	cp := framework.StartControlPlane(b, framework.Options{Members: 2, Args: args})
	ctx := framework.Context(b, 35*time.Minute)
	c := cp.Client(b)
	admin := kubernetes.NewForConfigOrDie(cp.RESTConfig(b))
	members := settleHPAWorkloads(ctx, b, cp, c, rblPolicy(1, 1), churnWorkloads)

	obs := newChurnObserver()
	stopObs := make(chan struct{})
	defer close(stopObs)
	for _, cs := range members {
		obs.watchMember(ctx, b, cs, stopObs)
	}
	obs.watchBindings(ctx, b, cp, stopObs)
	controllersBefore := controllerSamples(b, metricsAddr, churnControllerMetrics...)
	before, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	obs.begin()
	start := time.Now()
	for tick := 0; time.Since(start) < churnDuration; tick++ {
		for i := range churnWorkloads {
			load := int64(churnLow)
			if (i+tick)%2 == 0 {
				load = churnHigh
			}
			if err := world.SetLoad(cp.DataDir, templateName(i), load); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(churnPeriod)
	}
	after, err := scrapeRequests(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	changes, bindingWrites, violations, perBinding := obs.end(b, window)
	b.Logf("controllers' counters during the churn:\n%s", controllerSamples(b, metricsAddr, churnControllerMetrics...).since(controllersBefore))

	delta := after.minus(before)
	writes := delta.sum(func(k requestKey) bool { return isCountedWrite(k) && k.resource != "events" })
	b.Logf("churn for %v: %d member status changes, %.0f control-plane writes (%.3f per change), %d binding status writes (%.2f per binding per %v window; %d closer than the window without an urgent change); by verb/resource:\n%s",
		elapsed.Round(time.Second), changes, writes, writes/float64(max(changes, 1)), bindingWrites,
		perBinding, window, violations, delta.table(func(k requestKey) bool { return isCountedWrite(k) && k.resource != "events" }, 15))
	b.ReportMetric(float64(changes), "member-status-changes")
	b.ReportMetric(writes/float64(max(changes, 1)), "cp-writes/member-change")
	b.ReportMetric(perBinding, "binding-status-writes/binding/window")
	b.ReportMetric(float64(violations), "window-violations")
}

func envDuration(b *testing.B, name string) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		b.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}

// churnObserver counts member status changes and records each binding's
// status writes.
type churnObserver struct {
	mu       sync.Mutex
	counting bool
	changes  int
	// writes are, per binding, the times its status changed and whether
	// the change was urgent (clusters, Applied, Health, FullyApplied).
	writes map[string][]statusWrite
}

type statusWrite struct {
	at         time.Time
	urgent     bool
	generation int64
	// what names the parts of the status that changed (statusChanges).
	what string
}

func newChurnObserver() *churnObserver {
	return &churnObserver{writes: map[string][]statusWrite{}}
}

func (o *churnObserver) begin() {
	o.mu.Lock()
	o.counting = true
	o.mu.Unlock()
}

func (o *churnObserver) watchMember(ctx context.Context, b *testing.B, cs kubernetes.Interface, stop <-chan struct{}) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(rblNamespace))
	count := func() {
		o.mu.Lock()
		if o.counting {
			o.changes++
		}
		o.mu.Unlock()
	}
	deployments := f.Apps().V1().Deployments().Informer()
	if _, err := deployments.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		od, ok1 := oldObj.(*appsv1.Deployment)
		nd, ok2 := newObj.(*appsv1.Deployment)
		if ok1 && ok2 && !equality.Semantic.DeepEqual(od.Status, nd.Status) {
			count()
		}
	}}); err != nil {
		b.Fatal(err)
	}
	hpas := f.Autoscaling().V2().HorizontalPodAutoscalers().Informer()
	if _, err := hpas.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		oh, ok1 := oldObj.(*autoscalingv2.HorizontalPodAutoscaler)
		nh, ok2 := newObj.(*autoscalingv2.HorizontalPodAutoscaler)
		if ok1 && ok2 && !equality.Semantic.DeepEqual(oh.Status, nh.Status) {
			count()
		}
	}}); err != nil {
		b.Fatal(err)
	}
	f.Start(stop)
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			b.Fatalf("member informer %v did not sync", typ)
		}
	}
}

func (o *churnObserver) watchBindings(ctx context.Context, b *testing.B, cp *framework.ControlPlane, stop <-chan struct{}) {
	dyn, err := dynamic.NewForConfig(cp.RESTConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, rblNamespace, nil)
	inf := f.ForResource(schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		ou, ok1 := oldObj.(*unstructured.Unstructured)
		nu, ok2 := newObj.(*unstructured.Unstructured)
		if !ok1 || !ok2 {
			return
		}
		oldStatus, _, _ := unstructured.NestedMap(ou.Object, "status")
		newStatus, _, _ := unstructured.NestedMap(nu.Object, "status")
		if equality.Semantic.DeepEqual(oldStatus, newStatus) {
			return
		}
		w := statusWrite{at: time.Now(), urgent: urgentItems(oldStatus) != urgentItems(newStatus),
			generation: nu.GetGeneration(), what: statusChanges(oldStatus, newStatus)}
		o.mu.Lock()
		if o.counting {
			o.writes[nu.GetName()] = append(o.writes[nu.GetName()], w)
		}
		o.mu.Unlock()
	}}); err != nil {
		b.Fatal(err)
	}
	f.Start(stop)
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			b.Fatalf("binding informer %v did not sync", typ)
		}
	}
}

// urgentItems is what of a binding status is written at once, not
// coalesced: the clusters with Applied and Health, FullyApplied's status,
// and the generations the scheduler and the conditions observed (the
// answer to a spec change, such as the replicas syncer's, is not runtime
// status).
func urgentItems(status map[string]any) string {
	out := fmt.Sprintf("%v;", status["schedulerObservedGeneration"])
	items, _, _ := unstructured.NestedSlice(status, "aggregatedStatus")
	for _, it := range items {
		m, _ := it.(map[string]any)
		out += fmt.Sprintf("%v/%v/%v;", m["clusterName"], m["applied"], m["health"])
	}
	conds, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		out += fmt.Sprintf("%v@%v;", m["type"], m["observedGeneration"])
		if m["type"] == "FullyApplied" {
			out += fmt.Sprint(m["status"])
		}
	}
	return out
}

// statusChanges names what differs between two binding statuses: the
// top-level fields, conditions by type and aggregated items by cluster
// and field.
func statusChanges(oldStatus, newStatus map[string]any) string {
	var out []string
	for _, k := range changedKeys(oldStatus, newStatus) {
		switch k {
		case "conditions":
			out = append(out, "conditions["+strings.Join(changedItems(oldStatus[k], newStatus[k], "type"), ",")+"]")
		case "aggregatedStatus":
			out = append(out, "aggregatedStatus["+strings.Join(changedItems(oldStatus[k], newStatus[k], "clusterName"), ",")+"]")
		default:
			out = append(out, k)
		}
	}
	return strings.Join(out, " ")
}

// changedItems names the items of two lists of objects, identified by
// their field key, that differ, with the fields that do (name.field).
func changedItems(oldList, newList any, key string) []string {
	byKey := func(l any) map[string]map[string]any {
		m := map[string]map[string]any{}
		items, _ := l.([]any)
		for _, it := range items {
			if o, ok := it.(map[string]any); ok {
				m[fmt.Sprint(o[key])] = o
			}
		}
		return m
	}
	o, n := byKey(oldList), byKey(newList)
	var out []string
	for _, name := range keysOfEither(o, n) {
		for _, f := range changedKeys(o[name], n[name]) {
			// A reflected member status: which of its fields.
			os, ok1 := o[name][f].(map[string]any)
			ns, ok2 := n[name][f].(map[string]any)
			if f != "status" || !ok1 || !ok2 {
				out = append(out, name+"."+f)
				continue
			}
			for _, k := range changedKeys(os, ns) {
				out = append(out, name+".status."+k)
			}
		}
	}
	return out
}

// changedKeys are the keys whose values differ between a and b, in order.
func changedKeys(a, b map[string]any) []string {
	var out []string
	for _, k := range keysOfEither(a, b) {
		if !equality.Semantic.DeepEqual(a[k], b[k]) {
			out = append(out, k)
		}
	}
	return out
}

// keysOfEither are the keys of a or b, in order.
func keysOfEither[V any](a, b map[string]V) []string {
	return sets.List(sets.KeySet(a).Union(sets.KeySet(b)))
}

// end stops counting and returns the member status changes, the binding
// status writes, how many came closer than window after the previous one
// without an urgent change, and the writes per binding per window. The
// first violations are logged with what each of the two writes changed.
func (o *churnObserver) end(b *testing.B, window time.Duration) (changes, writes, violations int, perBindingWindow float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counting = false
	var first, last time.Time
	for name, ws := range o.writes {
		sort.Slice(ws, func(i, j int) bool { return ws[i].at.Before(ws[j].at) })
		for i, w := range ws {
			writes++
			if first.IsZero() || w.at.Before(first) {
				first = w.at
			}
			if w.at.After(last) {
				last = w.at
			}
			// 200 ms of slack: the informer sees writes later than the
			// executor makes them, and not always equally late.
			if i > 0 && !w.urgent && w.at.Sub(ws[i-1].at) < window-200*time.Millisecond {
				violations++
				if violations <= 10 {
					p := ws[i-1]
					b.Logf("window violation: %s written %v after its previous write: generation %d → %d; before: %s; then: %s",
						name, w.at.Sub(p.at).Round(time.Millisecond), p.generation, w.generation, p.what, w.what)
				}
			}
		}
	}
	b.Logf("binding status writes by what they changed (cluster names left out), most frequent first:\n%s", whatChanged(o.writes, 12))
	windows := churnDuration.Seconds() / window.Seconds()
	if bindings := float64(2 * churnWorkloads); windows > 0 {
		perBindingWindow = float64(writes) / bindings / windows
	}
	return o.changes, writes, violations, perBindingWindow
}

// whatChanged counts the status writes by the parts they changed, with the
// cluster names taken out (member1.status.replicas → status.replicas), and
// lists the limit most frequent.
func whatChanged(writes map[string][]statusWrite, limit int) string {
	counts := map[string]int{}
	for _, ws := range writes {
		for _, w := range ws {
			counts[clusterless.ReplaceAllString(w.what, "")]++
		}
	}
	kinds := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return counts[b] - counts[a] })
	var sb strings.Builder
	for i, k := range kinds {
		if i == limit {
			break
		}
		fmt.Fprintf(&sb, "    %6d %s\n", counts[k], k)
	}
	return sb.String()
}

// clusterless matches a member name before a field of an aggregated item.
var clusterless = regexp.MustCompile(`member[0-9]+\.`)

// churnControllerMetrics are the controllers' counters StatusChurn reports:
// how the executor's status writes went (written, coalesced), its member
// syncs, the member writes refused as decided from a stale copy, the writes the stale-write guard held back, and each work queue's
// adds and the time items waited in it and were worked on (a queue that
// keeps up merges fewer events into one reconcile).
var churnControllerMetrics = []string{
	"atoll_executor_binding_status_writes_total",
	"atoll_executor_cluster_syncs_total",
	"atoll_executor_stale_member_copies_total",
	"atoll_controller_stale_writes_total",
	"atoll_controller_unchanged_writes_total",
	"atoll_controller_requests_total",
	"workqueue_adds_total",
	"workqueue_queue_duration_seconds_sum",
	"workqueue_queue_duration_seconds_count",
	"workqueue_work_duration_seconds_sum",
}

// samples are Prometheus samples by their full name with labels.
type samples map[string]float64

// controllerSamples reads the samples of the named metrics from the
// controllers' /metrics on addr.
func controllerSamples(b *testing.B, addr string, names ...string) samples {
	raw, err := controllerMetrics(addr)
	if err != nil {
		b.Fatal(err)
	}
	out := samples{}
	err = eachSample(raw, func(n string) bool { return slices.Contains(names, n) }, func(name, labels string, v float64) {
		if labels != "" {
			name += "{" + labels + "}"
		}
		out[name] = v
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// since lists, in order, the samples that grew since before, by how much.
func (s samples) since(before samples) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if d := s[k] - before[k]; d != 0 {
			fmt.Fprintf(&sb, "    %8.0f %s\n", d, k)
		}
	}
	if sb.Len() == 0 {
		return "    (none)\n"
	}
	return sb.String()
}
