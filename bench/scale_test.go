package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// BenchmarkTemplates100k is issue 14's item 4: ATOLL_BENCH_TEMPLATES
// templates (default 100,000; half small Deployments, half ConfigMaps) over
// two api-only members, the controllers in a process of their own (`atoll
// controller-manager` against `atoll up --controllers=`), so that their
// memory is measured apart from the API servers'. It reports:
//
//   - rss-kb/template: the controller-manager's RSS after settling, per
//     template; marginal-kb/template: the same less its RSS when idle with
//     no templates;
//   - idle-cpu-ms/s, idle-reconciles/s: the settled process's CPU and
//     reconciles (all controllers) over 30 s with nothing changing;
//     idle-gc-ms/s: the Go collector's share of that CPU;
//   - peak-kb/template: the peak RSS (VmHWM) of a cold restart with
//     everything in place;
//   - restart-idle-s: from the restarted process's start to ready with
//     empty queues, no worker busy and no binding parked;
//     restart-changed: templates, bindings and member copies
//     written by the restart (0 is the target); restart-writes: all writes
//     to the API servers meanwhile, the fresh template's own (about ten)
//     included; restart-unchanged-writes: writes of the restarted
//     controllers that the API server accepted without a change (0 is
//     the target; restart-changed cannot see them);
//     restart-bulk-consistency-checks: the API servers' watch-cache
//     consistency checks of templates, bindings and copies that finished
//     meanwhile (each lists the resource from etcd; one
//     during the restart takes CPU the restart would have had);
//   - fresh-ms: a template created as soon as the restarted process is
//     ready (its start-up backlog queued) until it is in both members.
//
// ATOLL_BENCH_CM_ENV="GOGC=50 GOMEMLIMIT=300MiB" (for example) sets the
// controller-manager's environment, to see what the Go runtime's own
// memory settings do; ATOLL_BENCH_CM_ARGS="--event-types=Warning" (for
// example) adds flags; ATOLL_BENCH_CP_ARGS adds `atoll up` flags, e.g.
// "--kube-apiserver-arg=--feature-gates=DetectCacheInconsistency=false"
// to take the control plane's consistency checks out of a measurement.
// ATOLL_BENCH_PPROF=DIR saves the controller-manager's
// heap profile after settling and the idle window, right after a
// collection, sampled every 16 KB (DIR/scale-heap.pprof; the restarted
// process samples at the runtime's default), 30 s of the
// settled process's CPU taken after the idle window, so that profiling
// does not count in its figures (DIR/scale-settled-cpu.pprof), and 30 s of CPU
// profile from the restarted process's start (DIR/scale-restart-cpu.pprof,
// and when that ends before the process is ready, 30 s more from ready:
// DIR/scale-restart-ready-cpu.pprof;
// the control plane's process over the same 30 s in
// DIR/scale-restart-control-plane-cpu.pprof).
// ATOLL_BENCH_HOLD=FILE keeps the federation running after the run while
// FILE exists, to repeat restarts by hand (FILE says where everything is).
//
// Run: make build && ATOLL_BIN=$PWD/bin/atoll ATOLL_BENCH_TEMPLATES=10000 go
// test -run '^$' -bench Templates100k -benchtime 1x -timeout 3h ./bench/
func BenchmarkTemplates100k(b *testing.B) {
	for range b.N {
		runTemplatesAtScale(b)
	}
}

const scaleNS = "scale"

func scaleTemplates(b *testing.B) int {
	n := 100000
	if v := os.Getenv("ATOLL_BENCH_TEMPLATES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			b.Fatalf("ATOLL_BENCH_TEMPLATES=%q: want a number of templates, at least 2", v)
		}
	}
	return n
}

// controllerManager is an `atoll controller-manager` process.
type controllerManager struct {
	cmd     *exec.Cmd
	metrics string
	health  string
	pprof   string // "" when not profiled
	stderr  string // its file
	started time.Time
}

func startScaleControllerManager(b *testing.B, cp *framework.ControlPlane, logDir string, run int) *controllerManager {
	m := &controllerManager{metrics: framework.FreeLoopbackAddr(b), health: framework.FreeLoopbackAddr(b)}
	args := []string{"controller-manager", "--kubeconfig", cp.Kubeconfig, "--leader-elect=false",
		"--metrics-bind-address", m.metrics, "--health-probe-bind-address", m.health,
		"--kube-api-qps=1000", "--kube-api-burst=2000",
		"--log-file", filepath.Join(logDir, fmt.Sprintf("controller-manager-%d.log", run))}
	if os.Getenv("ATOLL_BENCH_PPROF") != "" {
		m.pprof = framework.FreeLoopbackAddr(b)
		args = append(args, "--pprof-bind-address="+m.pprof)
	}
	// ATOLL_BENCH_CM_ARGS: more flags for the controller-manager,
	// space-separated (--event-types=Warning, say).
	args = append(args, strings.Fields(os.Getenv("ATOLL_BENCH_CM_ARGS"))...)
	m.cmd = exec.Command(framework.Binary(b), args...)
	m.cmd.Env = os.Environ()
	if m.pprof != "" && run == 1 {
		// A finer heap sample than the default one per 512 KB: the
		// per-template figures are made of objects of a few hundred bytes.
		// Only the first process, whose heap is profiled: the sampling's
		// stack walks cost the restarted one 5 % of its CPU.
		m.cmd.Env = append(m.cmd.Env, "GODEBUG=memprofilerate=16384")
	}
	// ATOLL_BENCH_CM_ENV: more environment for the controller-manager
	// alone, space-separated (GOGC=50 GOMEMLIMIT=300MiB, say).
	m.cmd.Env = append(m.cmd.Env, strings.Fields(os.Getenv("ATOLL_BENCH_CM_ENV"))...)
	// A crash's panic goes to stderr, not to the log file.
	m.stderr = filepath.Join(logDir, fmt.Sprintf("controller-manager-%d.stderr", run))
	stderr, err := os.Create(m.stderr)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stderr.Close() }() // the child has its own descriptor
	m.cmd.Stderr = stderr
	m.started = time.Now()
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if m.cmd.ProcessState == nil {
			_ = m.cmd.Process.Kill()
			_ = m.cmd.Wait()
		}
	})
	return m
}

func (m *controllerManager) stop(b *testing.B) {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Log("controller-manager did not stop within a minute; killed")
		_ = m.cmd.Process.Kill()
		<-done
	}
}

// watchFreshStages polls the fresh template's binding every 100 ms until
// it is placed, and returns a summary of when it was created and placed
// (since start), to tell the detector's and scheduler's share of the fresh
// template's latency from the executor's.
func watchFreshStages(ctx context.Context, c client.Client, start time.Time) func() string {
	var created, placed time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil && time.Since(start) < 10*time.Minute {
			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: scaleNS, Name: "fresh-configmap"}, rb); err == nil {
				if created == 0 {
					created = time.Since(start)
				}
				if len(rb.Spec.Clusters) > 0 {
					placed = time.Since(start)
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() string {
		select {
		case <-done:
		case <-time.After(time.Minute):
			return "binding not placed within a minute of the copies"
		}
		return fmt.Sprintf("binding created after %s, placed after %s", created.Round(time.Millisecond), placed.Round(time.Millisecond))
	}
}

// serving reports whether the profiling endpoint answers.
func (m *controllerManager) serving() bool {
	resp, err := http.Get("http://" + m.pprof + "/debug/pprof/") //nolint:noctx // loopback
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// ready reports whether the process is ready; it fails the benchmark
// when the process has exited.
func (m *controllerManager) ready(b *testing.B) bool {
	if exited(m.cmd.Process.Pid) {
		out, _ := os.ReadFile(m.stderr)
		b.Fatalf("controller-manager exited; its stderr ends:\n%s", out[max(0, len(out)-4000):])
	}
	resp, err := http.Get("http://" + m.health + "/readyz") //nolint:noctx // loopback, bounded by the caller's loop
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// metric sums the samples of a metric family whose line contains every
// one of contains.
// exited reports whether pid has exited and not been waited for (a zombie)
// or is gone.
func exited(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(data[strings.LastIndex(string(data), ")")+2:]))
	return len(f) > 0 && f[0] == "Z"
}

func (m *controllerManager) metric(name string, contains ...string) float64 {
	resp, err := http.Get("http://" + m.metrics + "/metrics") //nolint:noctx // loopback
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, c := range contains {
			if !strings.Contains(line, c) {
				continue lines
			}
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// queueDepths are the non-empty work queues by name ("name=depth ...").
func (m *controllerManager) queueDepths() string {
	resp, err := http.Get("http://" + m.metrics + "/metrics") //nolint:noctx // loopback
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "workqueue_depth{") {
			continue
		}
		_, rest, ok := strings.Cut(line, `name="`)
		name, _, _ := strings.Cut(rest, `"`)
		value := line[strings.LastIndex(line, " ")+1:]
		if ok && value != "0" {
			out = append(out, name+"="+value)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// logQueues logs the non-empty work queues every period until stop is
// closed: which controller a restart (or a burst) is still waiting for.
func (m *controllerManager) logQueues(b *testing.B, phase string, period time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			b.Logf("%s +%s: queued %s; detector busy %v; parked %v", phase, time.Since(m.started).Round(time.Second), m.queueDepths(),
				m.metric("atoll_detector_active_workers"), m.metric("atoll_executor_parked_bindings"))
		}
	}
}

// idle: ready, nothing queued, parked or being worked on. Parked bindings
// (waiting for a member cache's first list or a template list) are in no
// queue: before session 22 this check left them out and could call a
// restart idle while the executor's comparison pass was still to come.
func (m *controllerManager) idle(b *testing.B) func() (bool, string) {
	return func() (bool, string) {
		if !m.ready(b) {
			return false, "not ready"
		}
		depth, busy := m.metric("workqueue_depth"), m.metric("atoll_detector_active_workers")
		working, parked := m.metric("controller_runtime_active_workers"), m.metric("atoll_executor_parked_bindings")
		return depth == 0 && busy == 0 && working == 0 && parked == 0,
			fmt.Sprintf("queued %v, detector busy %v, workers busy %v, parked %v", depth, busy, working, parked)
	}
}

// peakMB is the process's peak RSS.
func peakMB(pid int) (float64, error) { return procStatusMB(pid, "VmHWM") }

// scaleVersions are the resourceVersions of templates, bindings and member
// copies.
func scaleVersions(ctx context.Context, b *testing.B, c client.Client, members map[string]kubernetes.Interface) map[string]string {
	out := map[string]string{}
	add := func(prefix string, items []metav1.Object) {
		for _, o := range items {
			out[prefix+o.GetName()] = o.GetResourceVersion()
		}
	}
	var rbs workv1alpha2.ResourceBindingList
	if err := c.List(ctx, &rbs, client.InNamespace(scaleNS)); err != nil {
		b.Fatal(err)
	}
	for i := range rbs.Items {
		out["binding/"+rbs.Items[i].Name] = rbs.Items[i].ResourceVersion
	}
	for name, cs := range members {
		for kind, items := range listScaleObjects(ctx, b, cs) {
			add(name+"/"+kind+"/", items)
		}
	}
	return out
}

func listScaleObjects(ctx context.Context, b *testing.B, cs kubernetes.Interface) map[string][]metav1.Object {
	out := map[string][]metav1.Object{}
	ds, err := cs.AppsV1().Deployments(scaleNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range ds.Items {
		out["deployment"] = append(out["deployment"], &ds.Items[i])
	}
	cms, err := cs.CoreV1().ConfigMaps(scaleNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range cms.Items {
		if cms.Items[i].Name != "kube-root-ca.crt" {
			out["configmap"] = append(out["configmap"], &cms.Items[i])
		}
	}
	return out
}

func runTemplatesAtScale(b *testing.B) {
	n := scaleTemplates(b)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	logDir := b.TempDir()
	cpArgs := append([]string{"--controllers=", "--member-args=--api-only"}, strings.Fields(os.Getenv("ATOLL_BENCH_CP_ARGS"))...)
	cpPprof := ""
	if os.Getenv("ATOLL_BENCH_PPROF") != "" {
		// The control plane's process (API server, etcd) serves profiles
		// too: until ready, a restart waits on it as much as on the
		// controllers.
		cpPprof = framework.FreeLoopbackAddr(b)
		cpArgs = append(cpArgs, "--pprof-bind-address="+cpPprof)
	}
	cp := framework.StartControlPlane(b, framework.Options{Members: 2, Args: cpArgs})
	c := cp.Client(b)
	cfg := cp.RESTConfig(b)
	members := map[string]kubernetes.Interface{"member1": cp.MemberClientset(b, "member1"), "member2": cp.MemberClientset(b, "member2")}

	cm := startScaleControllerManager(b, cp, logDir, 1)
	waitClustersReady(ctx, b, c, 2)
	framework.Eventually(b, 2*time.Minute, "controller-manager idle, no templates", cm.idle(b))
	time.Sleep(5 * time.Second)
	emptyMB, err := residentMB(cm.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}

	if err := c.Create(ctx, utiltesting.MakeNamespace(scaleNS).Obj()); err != nil {
		b.Fatal(err)
	}
	createPolicy(ctx, b, c, utiltesting.MakePropagationPolicy("all", scaleNS).ClusterNames("member1", "member2").
		Select("apps/v1", "Deployment", "").Select("v1", "ConfigMap", "").Obj())
	start := time.Now()
	// Where a burst waits: the queues once a minute.
	stopBurstLog := make(chan struct{})
	go cm.logQueues(b, "burst", time.Minute, stopBurstLog)
	createInParallel(ctx, b, cfg, n, func(cs kubernetes.Interface, i int) error {
		if i%2 == 0 {
			_, err := cs.AppsV1().Deployments(scaleNS).Create(ctx, benchDeployment(scaleNS, templateName(i), 1), metav1.CreateOptions{})
			return err
		}
		_, err := cs.CoreV1().ConfigMaps(scaleNS).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: templateName(i), Namespace: scaleNS, Labels: map[string]string{"bench": "scale"}},
			Data:       map[string]string{"setting": fmt.Sprintf("value-%d", i)}}, metav1.CreateOptions{})
		return err
	})
	created := time.Since(start)
	for name, cs := range members {
		framework.Eventually(b, 3*time.Hour, fmt.Sprintf("%d templates in %s", n, name), func() (bool, string) {
			got := 0
			for _, items := range listScaleObjects(ctx, b, cs) {
				got += len(items)
			}
			if got < n {
				time.Sleep(10 * time.Second) // lists of this size are not free
			}
			return got == n, fmt.Sprintf("%d of %d", got, n)
		})
	}
	propagated := time.Since(start)
	framework.Eventually(b, time.Hour, "controller-manager idle after the burst", cm.idle(b))
	time.Sleep(10 * time.Second) // coalesced status writes
	close(stopBurstLog)
	burstWrites := 0.0
	for _, verb := range controllerWriteVerbs {
		burstWrites += cm.metric("atoll_controller_requests_total", `verb="`+verb+`"`)
	}
	b.Logf("burst: %.2f control-plane writes per template (events included); by controller:\n%s", burstWrites/float64(n), controllerWrites(cm.metrics))
	b.Logf("burst: conditional writes not sent, the cache behind this process's own write: scheduler %.0f, executor %.0f, all %.0f",
		cm.metric("atoll_controller_stale_writes_total", `controller="scheduler"`), cm.metric("atoll_controller_stale_writes_total", `controller="executor"`),
		cm.metric("atoll_controller_stale_writes_total"))
	b.Logf("burst: writes the API server accepted without a change: %.0f", cm.metric("atoll_controller_unchanged_writes_total"))
	b.Logf("burst: scheduler status parts handed to the executor %.0f, written by the scheduler after waiting %.0f",
		cm.metric("atoll_scheduler_status_handoffs_total", `outcome="handed"`), cm.metric("atoll_scheduler_status_handoffs_total", `outcome="timed-out"`))
	b.ReportMetric(burstWrites/float64(n), "burst-writes/template")
	settledMB, err := residentMB(cm.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	heapMB := cm.metric("go_memstats_heap_inuse_bytes") / (1 << 20)
	b.Logf("settled memory (MB): %s", cm.memstats())
	idleCPU, idleGC, idleReconciles := cm.idleWork(b, scaleIdleWindow)
	if dir := os.Getenv("ATOLL_BENCH_PPROF"); dir != "" {
		// After the idle window and a collection: what is kept, not what
		// is in flight.
		saveProfile(b, cm.pprof, "heap?gc=1", filepath.Join(dir, "scale-heap.pprof"))
		// What the settled process spends its idle CPU on.
		saveProfile(b, cm.pprof, "profile?seconds=30", filepath.Join(dir, "scale-settled-cpu.pprof"))
	}
	before := scaleVersions(ctx, b, c, members)

	// Cold restart with everything in place.
	cm.stop(b)
	cpBefore, err := scrapeRequests(ctx, kubernetes.NewForConfigOrDie(cfg))
	if err != nil {
		b.Fatal(err)
	}
	memberBefore := map[string]requestCounts{}
	for name, cs := range members {
		if memberBefore[name], err = scrapeRequests(ctx, cs); err != nil {
			b.Fatal(err)
		}
	}
	apiServers := map[string]kubernetes.Interface{"control-plane": kubernetes.NewForConfigOrDie(cfg), "member1": members["member1"], "member2": members["member2"]}
	checksBefore := consistencyChecks(ctx, b, apiServers)
	cm = startScaleControllerManager(b, cp, logDir, 2)
	cpuAtStart := restartCPU(cp, cm)
	restartProfiled := make(chan struct{})
	if dir := os.Getenv("ATOLL_BENCH_PPROF"); dir != "" {
		// Where the restart's time goes: 30 s of CPU from the moment the
		// process serves its profiling endpoint (before it is ready).
		go func() {
			defer close(restartProfiled)
			cpProfiled := make(chan struct{})
			go func() {
				defer close(cpProfiled)
				saveProfile(b, cpPprof, "profile?seconds=30", filepath.Join(dir, "scale-restart-control-plane-cpu.pprof"))
			}()
			for !cm.serving() {
				time.Sleep(50 * time.Millisecond)
			}
			saveProfile(b, cm.pprof, "profile?seconds=30", filepath.Join(dir, "scale-restart-cpu.pprof"))
			<-cpProfiled
		}()
	} else {
		close(restartProfiled)
	}
	defer func() { <-restartProfiled }()
	framework.Eventually(b, 10*time.Minute, "restarted controller-manager ready", func() (bool, string) { return cm.ready(b), "" })
	fresh := time.Now()
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(scaleNS).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: scaleNS}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	readyAfter := fresh.Sub(cm.started)
	cpuAtReady := restartCPU(cp, cm)
	if dir := os.Getenv("ATOLL_BENCH_PPROF"); dir != "" {
		select {
		case <-restartProfiled:
			// The first profile ended before the process was ready (a
			// large restart): 30 s more from ready, the executor's
			// comparison pass.
			readyProfiled := make(chan struct{})
			go func() {
				defer close(readyProfiled)
				saveProfile(b, cm.pprof, "profile?seconds=30", filepath.Join(dir, "scale-restart-ready-cpu.pprof"))
			}()
			defer func() { <-readyProfiled }()
		default: // the first profile covers the pass's start
		}
	}
	backlog := cm.metric("workqueue_depth")
	stages := watchFreshStages(ctx, c, fresh)
	arrived := map[string]time.Duration{}
	for name, cs := range members {
		framework.Eventually(b, 10*time.Minute, "fresh template in "+name, func() (bool, string) {
			_, err := cs.CoreV1().ConfigMaps(scaleNS).Get(ctx, "fresh", metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		arrived[name] = time.Since(fresh)
	}
	freshLatency := time.Since(fresh)
	b.Logf("restart: ready after %s; fresh template: %s; in members %v", readyAfter.Round(time.Millisecond), stages(), arrived)
	stopLog := make(chan struct{})
	go cm.logQueues(b, "restart", 5*time.Second, stopLog)
	framework.Eventually(b, time.Hour, "restarted controller-manager idle", cm.idle(b))
	restartIdle := time.Since(cm.started)
	cpuAtIdle := restartCPU(cp, cm)
	// Whether the restart waits on the CPU (the two cores busy) or on
	// something else, and whose CPU it is.
	b.Logf("restart CPU-seconds until ready (%.1f available): %s; from ready to idle (%.1f available): %s",
		2*readyAfter.Seconds(), cpuAtReady.minus(cpuAtStart), 2*(restartIdle-readyAfter).Seconds(), cpuAtIdle.minus(cpuAtReady))
	close(stopLog)
	// The comparison pass: ideally one sync per member copy (2n, the
	// fresh template's aside) and one executor reconcile per binding; a
	// binding that runs while one of its members still lists compares its
	// other copies twice.
	syncs := func(outcome string) float64 {
		return cm.metric("atoll_executor_cluster_syncs_total", `kind="resourcebinding"`, `outcome="`+outcome+`"`)
	}
	compared := syncs("current") + syncs("applied") + syncs("failed") + syncs("other")
	executorRuns := cm.metric("controller_runtime_reconcile_total", `controller="executor-resourcebinding"`)
	b.Logf("restart: %.0f cluster syncs compared or applied for %d member copies (%.0f current), %.0f parked; %.0f executor reconciles for %d bindings",
		compared, 2*n, syncs("current"), syncs("parked"), executorRuns, n)
	b.ReportMetric(compared/float64(2*n), "restart-syncs/copy")
	b.ReportMetric(executorRuns/float64(n), "restart-executor-runs/binding")
	// A watch-cache consistency check of the resources holding the
	// templates, their bindings and their copies, in an API server during
	// the restart, takes CPU the restart would have had
	// (scrapeConsistencyChecks); the other resources' checks are cheap.
	bulkChecks := 0.0
	for name, now := range consistencyChecks(ctx, b, apiServers) {
		var checked []string
		for resource, n := range now {
			if d := n - checksBefore[name][resource]; d > 0 {
				checked = append(checked, fmt.Sprintf("%s %.0f", resource, d))
				if scaleResources[resource] {
					bulkChecks += d
				}
			}
		}
		if len(checked) > 0 {
			sort.Strings(checked)
			b.Logf("watch-cache consistency checks %s finished during the restart: %s", name, strings.Join(checked, ", "))
		}
	}
	time.Sleep(10 * time.Second)
	peak, err := peakMB(cm.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	after := scaleVersions(ctx, b, c, members)
	changed := 0
	for k, v := range before {
		if after[k] != v {
			changed++
		}
	}
	// Writes to the API servers, Leases, Events and authentication reviews
	// aside; the fresh template's own (its create, claim, binding, copies
	// and status) are among them.
	isWrite := func(k requestKey) bool {
		switch k.verb {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		default:
			return false
		}
		return k.resource != "leases" && k.resource != "events" && k.resource != "tokenreviews" && k.resource != "subjectaccessreviews"
	}
	cpAfter, err := scrapeRequests(ctx, kubernetes.NewForConfigOrDie(cfg))
	if err != nil {
		b.Fatal(err)
	}
	writes := cpAfter.minus(cpBefore).sum(isWrite)
	for name, cs := range members {
		now, err := scrapeRequests(ctx, cs)
		if err != nil {
			b.Fatal(err)
		}
		writes += now.minus(memberBefore[name]).sum(isWrite)
	}

	perTemplate := func(mb float64) float64 { return mb * 1024 / float64(n) }
	b.ReportMetric(float64(n), "templates")
	b.ReportMetric(created.Seconds(), "create-s")
	b.ReportMetric(propagated.Seconds(), "propagate-s")
	b.ReportMetric(perTemplate(settledMB), "rss-kb/template")
	b.ReportMetric(perTemplate(settledMB-emptyMB), "marginal-kb/template")
	b.ReportMetric(heapMB*1024/float64(n), "heap-kb/template")
	b.ReportMetric(perTemplate(peak), "peak-kb/template")
	b.ReportMetric(restartIdle.Seconds(), "restart-idle-s")
	b.ReportMetric(writes, "restart-writes")
	b.ReportMetric(cm.metric("atoll_controller_unchanged_writes_total"), "restart-unchanged-writes")
	b.ReportMetric(bulkChecks, "restart-bulk-consistency-checks")
	b.ReportMetric(float64(changed), "restart-changed")
	b.ReportMetric(float64(freshLatency.Milliseconds()), "fresh-ms")
	b.ReportMetric(idleCPU, "idle-cpu-ms/s")
	b.ReportMetric(idleGC, "idle-gc-ms/s")
	b.ReportMetric(idleReconciles, "idle-reconciles/s")
	b.Logf("%d templates: created in %s, in both members after %s; controller-manager RSS %.0f MB settled (%.0f MB with none), heap in use %.0f MB, restart peak %.0f MB; settled, over %v: %.1f ms CPU/s (%.1f of it the collector's), %.2f reconciles/s; restart idle after %s with %.0f writes (fresh template's own included) and %d of %d objects changed; fresh template in both members after %s (queue depth %v when created)",
		n, created.Round(time.Second), propagated.Round(time.Second), settledMB, emptyMB, heapMB, peak, scaleIdleWindow, idleCPU, idleGC, idleReconciles,
		restartIdle.Round(100*time.Millisecond), writes, changed, len(before), freshLatency.Round(time.Millisecond), backlog)
	if f := os.Getenv("ATOLL_BENCH_HOLD"); f != "" {
		hold(ctx, b, f, cp, cm)
	}
}

// consistencyChecks is each API server's count of finished watch-cache
// consistency checks, per resource.
func consistencyChecks(ctx context.Context, b *testing.B, apiServers map[string]kubernetes.Interface) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for name, cs := range apiServers {
		n, err := scrapeConsistencyChecks(ctx, cs)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = n
	}
	return out
}

// scaleResources are the resources this benchmark fills (as
// scrapeConsistencyChecks names them): templates, bindings, copies.
var scaleResources = map[string]bool{"deployments.apps": true, "configmaps": true, "resourcebindings.work.karmada.io": true}

// hold keeps the benchmark's federation running while file exists (or
// until ctx ends): a 100,000-template set-up takes most of an hour to
// build, and a restart can then be repeated and inspected by hand against
// it. file gets the control plane's kubeconfig, its data dir (the members'
// kubeconfigs are under it) and the controller-manager's command line.
func hold(ctx context.Context, b *testing.B, file string, cp *framework.ControlPlane, cm *controllerManager) {
	info := fmt.Sprintf("kubeconfig=%s\ndata-dir=%s\ncontroller-manager-pid=%d\ncontroller-manager=%s\n",
		cp.Kubeconfig, cp.DataDir, cm.cmd.Process.Pid, strings.Join(cm.cmd.Args, " "))
	if err := os.WriteFile(file, []byte(info), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("holding the federation while %s exists", file)
	for ctx.Err() == nil {
		if _, err := os.Stat(file); err != nil {
			return
		}
		time.Sleep(time.Second)
	}
}

// memstats says where the process's memory is, from the Go runtime's
// own figures: heap allocated (live plus garbage not yet collected), heap
// in use, idle spans not yet returned to the OS, stacks, the runtime's own
// structures, and the heap size at which the next collection starts.
func (m *controllerManager) memstats() string {
	mb := func(name string) float64 { return m.metric(name) / (1 << 20) }
	return fmt.Sprintf("heap alloc %.0f, in use %.0f, idle not returned %.0f, stacks %.0f, other runtime %.0f, next GC at %.0f",
		mb("go_memstats_heap_alloc_bytes"), mb("go_memstats_heap_inuse_bytes"),
		mb("go_memstats_heap_idle_bytes")-mb("go_memstats_heap_released_bytes"), mb("go_memstats_stack_inuse_bytes"),
		mb("go_memstats_mspan_inuse_bytes")+mb("go_memstats_mcache_inuse_bytes")+mb("go_memstats_buck_hash_sys_bytes")+mb("go_memstats_gc_sys_bytes")+mb("go_memstats_other_sys_bytes"),
		mb("go_memstats_next_gc_bytes"))
}

// scaleIdleWindow is how long the settled controller-manager is watched
// for work it does with nothing changing.
const scaleIdleWindow = 30 * time.Second

// idleWork is what the controller-manager does while nothing changes: its
// CPU in ms per second, the Go collector's share of it (the runtime's own
// estimate), and its reconciles per second (every controller) over window.
// A settled federation should do next to nothing, whatever the number of
// templates; what a large live heap costs the collector is reported apart.
func (m *controllerManager) idleWork(b *testing.B, window time.Duration) (cpuMSPerS, gcMSPerS, reconcilesPerS float64) {
	pid := m.cmd.Process.Pid
	cpu0, err := processSeconds(pid)
	if err != nil {
		b.Fatal(err)
	}
	gc0 := m.metric("go_cpu_classes_gc_total_cpu_seconds_total")
	rec0 := m.metric("controller_runtime_reconcile_total")
	req0 := m.metric("atoll_controller_requests_total")
	time.Sleep(window)
	cpu1, err := processSeconds(pid)
	if err != nil {
		b.Fatal(err)
	}
	gc1 := m.metric("go_cpu_classes_gc_total_cpu_seconds_total")
	rec1 := m.metric("controller_runtime_reconcile_total")
	// Requests (events a burst left queued among them) cost CPU no
	// reconcile shows.
	b.Logf("settled window: %.0f requests to the control plane", m.metric("atoll_controller_requests_total")-req0)
	perS := func(d float64) float64 { return d / window.Seconds() }
	return 1000 * perS(cpu1-cpu0), 1000 * perS(gc1-gc0), perS(rec1 - rec0)
}

// restartCPU is the CPU time of the control plane, the members and the
// controller-manager; machine is every process's (/proc/stat).
func restartCPU(cp *framework.ControlPlane, cm *controllerManager) cpuTimes {
	t := processCPU(cp)
	if s, err := processSeconds(cm.cmd.Process.Pid); err == nil {
		t["controller-manager"] = s
	}
	if s, err := machineBusySeconds(); err == nil {
		t["machine"] = s
	}
	return t
}

// machineBusySeconds is the CPU time all processes used since boot
// (/proc/stat's cpu line less idle and iowait).
func machineBusySeconds() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy float64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		busy += n
	}
	return busy / 100, nil // USER_HZ
}
