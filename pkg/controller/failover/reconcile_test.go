package failover

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/scheduler"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// TestReconcile drives one binding through failover against a fake API:
// an untolerated NoExecute taint evicts (one write: cluster out, task in);
// with no alternative the eviction is held back and explained; an empty
// bucket delays it; a large-scale disruption pauses it.
func TestReconcile(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1alpha1.AddToScheme, workv1alpha2.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	sim, err := scheduler.NewSimulator(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	healthy := func(name string) *clusterv1alpha1.Cluster {
		return utiltesting.MakeCluster(name).APIEnablement("apps/v1", "Deployment").Ready().Obj()
	}
	failed := func(name string) *clusterv1alpha1.Cluster {
		c := utiltesting.MakeCluster(name).APIEnablement("apps/v1", "Deployment").
			Condition(clusterv1alpha1.ClusterConditionReady, metav1.ConditionUnknown, "ClusterNotReachable").
			Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoSchedule).
			Taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoExecute).Obj()
		for i := range c.Spec.Taints {
			c.Spec.Taints[i].TimeAdded = &metav1.Time{Time: now.Add(-time.Minute)}
		}
		return c
	}
	binding := func(clusters ...string) *workv1alpha2.ResourceBinding {
		return utiltesting.MakeBinding("web-deployment", "ns").Resource("apps/v1", "Deployment", "web").Replicas(2).
			Placement(utiltesting.MakePlacement().ClusterNames(clusters...).Duplicated().Obj()).
			TargetCluster("m1", 2).Obj()
	}
	run := func(t *testing.T, rb *workv1alpha2.ResourceBinding, limiter *eviction.Limiter, clusters ...*clusterv1alpha1.Cluster) (*workv1alpha2.ResourceBinding, reconcile.Result) {
		t.Helper()
		objs := []client.Object{rb}
		for _, c := range clusters {
			objs = append(objs, c)
		}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&workv1alpha2.ResourceBinding{}).Build()
		r := &reconciler{client: c, kind: bindingkind.ResourceBinding{}, sim: sim, unhealthy: newUnhealthyTracker(),
			recorder: events.NewFakeRecorder(10), opts: Options{Limiter: limiter, Clock: clocktesting.NewFakePassiveClock(now)}}
		r.opts.defaults()
		res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)})
		if err != nil {
			t.Fatal(err)
		}
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(rb), got); err != nil {
			t.Fatal(err)
		}
		return got, res
	}

	t.Run("evicted to the alternative", func(t *testing.T) {
		got, _ := run(t, binding("m1", "m2"), nil, failed("m1"), healthy("m2"))
		if len(got.Spec.Clusters) != 0 || len(got.Spec.GracefulEvictionTasks) != 1 || got.Spec.GracefulEvictionTasks[0].FromCluster != "m1" {
			t.Fatalf("clusters %v tasks %v; want m1 evicted with a task", got.Spec.Clusters, got.Spec.GracefulEvictionTasks)
		}
		if tk := got.Spec.GracefulEvictionTasks[0]; tk.Reason != workv1alpha2.EvictionReasonTaintUntolerated || tk.PurgeMode != policyv1alpha1.PurgeModeGracefully || *tk.Replicas != 2 {
			t.Errorf("task %+v", tk)
		}
	})
	t.Run("no alternative: held back and explained", func(t *testing.T) {
		got, res := run(t, binding("m1"), nil, failed("m1"), healthy("m2"))
		if len(got.Spec.Clusters) != 1 || len(got.Spec.GracefulEvictionTasks) != 0 {
			t.Fatalf("clusters %v tasks %v; want nothing moved", got.Spec.Clusters, got.Spec.GracefulEvictionTasks)
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.EvictionBlocked)
		if cond == nil || cond.Reason != workv1alpha2.BindingReasonNoAlternativeCluster || !strings.Contains(cond.Message, "did not match clusterAffinity") {
			t.Fatalf("condition %+v; want NoAlternativeCluster with the scheduler's diagnosis", cond)
		}
		if res.RequeueAfter != 30*time.Second {
			t.Errorf("requeue %s, want the 30s recheck", res.RequeueAfter)
		}
	})
	t.Run("bucket empty: delayed, nothing written", func(t *testing.T) {
		limiter := eviction.NewLimiter(1, 1)
		limiter.Take(now)
		got, res := run(t, binding("m1", "m2"), limiter, failed("m1"), healthy("m2"))
		if len(got.Spec.Clusters) != 1 || res.RequeueAfter <= 0 {
			t.Fatalf("clusters %v requeue %s; want no eviction yet and a requeue", got.Spec.Clusters, res.RequeueAfter)
		}
	})
	t.Run("most clusters down: paused", func(t *testing.T) {
		got, _ := run(t, binding("m1", "m2", "m3"), nil, failed("m1"), failed("m2"), healthy("m3"))
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.EvictionBlocked)
		if len(got.Spec.Clusters) != 1 || cond == nil || cond.Reason != workv1alpha2.BindingReasonLargeScaleDisruption {
			t.Fatalf("clusters %v condition %+v; want a LargeScaleDisruption pause", got.Spec.Clusters, cond)
		}
	})
	t.Run("tolerated for a while: wait until timeAdded + seconds", func(t *testing.T) {
		rb := binding("m1", "m2")
		rb.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(300)}}
		got, res := run(t, rb, nil, failed("m1"), healthy("m2"))
		if len(got.Spec.Clusters) != 1 || res.RequeueAfter != 4*time.Minute {
			t.Fatalf("clusters %v requeue %s; want no eviction and a requeue in 4m", got.Spec.Clusters, res.RequeueAfter)
		}
	})
}
