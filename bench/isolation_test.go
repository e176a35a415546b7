package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

// isolationTemplates is the number of ConfigMaps the benchmark updates in
// each phase.
const isolationTemplates = 200

// BenchmarkStoppedMember measures whether a dead member slows propagation
// to the healthy ones (DESIGN.md section 9, rule 7): `atoll up`
// with three members and 200 ConfigMaps placed on all three (tolerating the
// failure taints forever, so failover moves nothing). Each phase updates
// every ConfigMap (16 clients) and times the update until member1 and
// member2 hold the new value:
//
//   - healthy: all members up — the baseline of the same run;
//   - detecting: member3 partitioned away (its fault proxy blackholes
//     connections, so calls time out as behind a real partition, unlike a
//     stopped process, which refuses them at once) just before the burst,
//     before the control plane has marked it not Ready
//     (--cluster-failure-threshold, here 3 s after the first failed probe);
//   - stopped: member3 marked not Ready.
//
// Reported per phase: p50 and p99 (seconds) from an update returning to the
// new value appearing in member1 and member2 (seen by informers there), and
// the phase's wall time to the last such copy.
//
//	ATOLL_BIN=$PWD/bin/atoll go test -run '^$' -bench StoppedMember -benchtime 1x -timeout 20m ./bench/ -v
func BenchmarkStoppedMember(b *testing.B) {
	for range b.N {
		runStoppedMemberScenario(b)
	}
}

func runStoppedMemberScenario(b *testing.B) {
	ns := "isolation"
	cp := framework.StartControlPlane(b, framework.Options{Members: 3, Args: []string{
		"--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s",
	}})
	ctx := framework.Context(b, 18*time.Minute)
	c := cp.Client(b)
	waitClustersReady(ctx, b, c, 3)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	forever := []corev1.Toleration{
		{Key: clusterv1alpha1.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	}
	createPolicy(ctx, b, c, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "isolation", Namespace: ns},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "isolation"}}}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: propMembers},
				ClusterTolerations: forever,
			},
		},
	})
	obs := newConfigMapObserver(ctx, b, cp, ns, propMembers)
	write := func(version string) []time.Time {
		return createInParallel(ctx, b, cp.RESTConfig(b), isolationTemplates, func(cs kubernetes.Interface, i int) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i), Namespace: ns,
				Labels: map[string]string{"bench": "isolation"}}, Data: map[string]string{"v": version}}
			if version == "v0" {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				return err
			}
			_, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	}
	wait := func(version string, members []int) {
		want := isolationTemplates * len(members)
		framework.Eventually(b, 10*time.Minute, version+" in members "+fmt.Sprint(members), func() (bool, string) {
			n := obs.count(version, members)
			return n == want, fmt.Sprintf("%d of %d", n, want)
		})
	}
	write("v0")
	wait("v0", []int{0, 1, 2})

	phase := func(name, version string) {
		start := time.Now()
		written := write(version)
		wait(version, []int{0, 1})
		var lat []float64
		var last time.Time
		for i := range isolationTemplates {
			for _, m := range []int{0, 1} {
				seen := obs.seen(version, m, i)
				lat = append(lat, seen.Sub(written[i]).Seconds())
				if seen.After(last) {
					last = seen
				}
			}
		}
		sort.Float64s(lat)
		p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
		wall := last.Sub(start).Seconds()
		b.Logf("%s: %d updates seen in member1+member2, p50 %.3fs p99 %.3fs, last after %.2fs", name, len(lat), p50, p99, wall)
		b.ReportMetric(p50, name+"-p50-s")
		b.ReportMetric(p99, name+"-p99-s")
		b.ReportMetric(wall, name+"-wall-s")
	}

	phase("healthy", "v1")
	cp.Atoll(b, "sim", "fault", "--data-dir", cp.DataDir, "member3", "partition")
	phase("detecting", "v2")
	framework.Eventually(b, time.Minute, "member3 not Ready", func() (bool, string) {
		var cl clusterv1alpha1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: "member3"}, &cl); err != nil {
			return false, err.Error()
		}
		return !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady), "still Ready"
	})
	phase("stopped", "v3")
}

// configMapObserver timestamps when cm-N first holds each value of key "v"
// in each member.
type configMapObserver struct {
	mu    sync.Mutex
	first map[string][]map[int]time.Time // version → [member] index → first seen
	n     int
}

func newConfigMapObserver(ctx context.Context, b *testing.B, cp *framework.ControlPlane, ns string, members []string) *configMapObserver {
	o := &configMapObserver{first: map[string][]map[int]time.Time{}, n: len(members)}
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	for m, name := range members {
		f := informers.NewSharedInformerFactoryWithOptions(clientWithLimits(b, cp.MemberConfig(b, name)), 0, informers.WithNamespace(ns))
		inf := f.Core().V1().ConfigMaps().Informer()
		record := func(obj any) {
			now := time.Now()
			cm, ok := obj.(*corev1.ConfigMap)
			if !ok {
				return
			}
			i, err := strconv.Atoi(strings.TrimPrefix(cm.Name, "cm-"))
			if err != nil {
				return
			}
			v := cm.Data["v"]
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.first[v] == nil {
				o.first[v] = make([]map[int]time.Time, o.n)
				for k := range o.first[v] {
					o.first[v][k] = map[int]time.Time{}
				}
			}
			if _, seen := o.first[v][m][i]; !seen {
				o.first[v][m][i] = now
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }}); err != nil {
			b.Fatal(err)
		}
		f.Start(stop)
		f.WaitForCacheSync(ctx.Done())
	}
	return o
}

func (o *configMapObserver) count(version string, members []int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, m := range members {
		if o.first[version] != nil {
			n += len(o.first[version][m])
		}
	}
	return n
}

func (o *configMapObserver) seen(version string, m, i int) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first[version][m][i]
}
