package eviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func cluster(name string, ready metav1.ConditionStatus, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.Taints = taints
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready}}
	return c
}

func TestEvict(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 6, Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 4}}}
	if Evict(spec, Request{Cluster: "m3"}, t0) {
		t.Fatal("evicting from a cluster the binding is not on reported a change")
	}
	grace := int32(60)
	ok := Evict(spec, Request{Cluster: "m1", PurgeMode: policyv1alpha1.PurgeModeGraciously, Reason: "TaintUntolerated", Producer: "TaintManager", GracePeriodSeconds: &grace}, t0) //nolint:staticcheck // SA1019: the deprecated spelling is normalized to Gracefully
	if !ok || len(spec.Clusters) != 1 || spec.Clusters[0].Name != "m2" {
		t.Fatalf("Evict = %t, clusters %v; want m1 removed", ok, spec.Clusters)
	}
	if len(spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("tasks = %v, want one", spec.GracefulEvictionTasks)
	}
	task := spec.GracefulEvictionTasks[0]
	if task.FromCluster != "m1" || task.PurgeMode != policyv1alpha1.PurgeModeGracefully || *task.Replicas != 2 ||
		*task.GracePeriodSeconds != 60 || !task.CreationTimestamp.Time.Equal(t0) || len(task.ClustersBeforeFailover) != 2 {
		t.Errorf("task = %+v", task)
	}
	// Directly tasks carry no grace period (the CRD forbids nothing, but it
	// would mean nothing).
	spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: "m1", Replicas: 1})
	Evict(spec, Request{Cluster: "m1", PurgeMode: policyv1alpha1.PurgeModeDirectly, GracePeriodSeconds: &grace}, t0)
	if len(spec.GracefulEvictionTasks) != 1 || spec.GracefulEvictionTasks[0].GracePeriodSeconds != nil {
		t.Errorf("a second eviction from m1 should replace the task, without grace: %+v", spec.GracefulEvictionTasks)
	}
}

func TestAssess(t *testing.T) {
	created := &metav1.Time{Time: t0}
	task := func(mode policyv1alpha1.PurgeMode) *workv1alpha2.GracefulEvictionTask {
		return &workv1alpha2.GracefulEvictionTask{FromCluster: "m1", PurgeMode: mode, CreationTimestamp: created, Producer: "TaintManager"}
	}
	withState := func(tk *workv1alpha2.GracefulEvictionTask) *workv1alpha2.GracefulEvictionTask {
		tk.PreservedLabelState = map[string]string{"checkpoint": "17"}
		return tk
	}
	up := cluster("m1", metav1.ConditionTrue)
	down := cluster("m1", metav1.ConditionUnknown)
	healthy := Binding{Placed: true, Healthy: true}
	backAt := func(at time.Time) *clusterv1alpha1.Cluster {
		c := cluster("m1", metav1.ConditionTrue)
		c.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: at}
		return c
	}
	placed := Binding{Placed: true}
	cases := map[string]struct {
		task     *workv1alpha2.GracefulEvictionTask
		cluster  *clusterv1alpha1.Cluster
		binding  Binding
		now      time.Time
		want     Decision
		wantWait time.Duration
	}{
		"cluster gone":                                              {task(policyv1alpha1.PurgeModeGracefully), nil, Binding{}, t0, Complete, 0},
		"never is kept":                                             {task(policyv1alpha1.PurgeModeNever), up, healthy, t0, Keep, 0},
		"unreachable cluster keeps the task":                        {task(policyv1alpha1.PurgeModeDirectly), down, healthy, t0, Keep, 0},
		"directly waits for the replacement":                        {task(policyv1alpha1.PurgeModeDirectly), up, placed, t0, Keep, 10 * time.Minute},
		"directly completes on healthy":                             {task(policyv1alpha1.PurgeModeDirectly), up, healthy, t0, Complete, 0},
		"directly: grace period over and placed":                    {task(policyv1alpha1.PurgeModeDirectly), up, placed, t0.Add(11 * time.Minute), Complete, 0},
		"directly: grace period over, placed nowhere":               {task(policyv1alpha1.PurgeModeDirectly), up, Binding{}, t0.Add(11 * time.Minute), Complete, 0},
		"gracefully completes on healthy":                           {task(policyv1alpha1.PurgeModeGracefully), up, healthy, t0, Complete, 0},
		"directly with preserved state waits for the replacement":   {withState(task(policyv1alpha1.PurgeModeDirectly)), up, placed, t0, Keep, 10 * time.Minute},
		"directly with preserved state completes on healthy":        {withState(task(policyv1alpha1.PurgeModeDirectly)), up, healthy, t0, Complete, 0},
		"directly with preserved state: grace over, placed nowhere": {withState(task(policyv1alpha1.PurgeModeDirectly)), up, Binding{}, t0.Add(11 * time.Minute), Complete, 0},
		"gracefully waits for the grace period":                     {task(policyv1alpha1.PurgeModeGracefully), up, placed, t0.Add(4 * time.Minute), Keep, 6 * time.Minute},
		"grace period over and placed":                              {task(policyv1alpha1.PurgeModeGracefully), up, placed, t0.Add(11 * time.Minute), Complete, 0},
		"grace period over but placed nowhere":                      {task(policyv1alpha1.PurgeModeGracefully), up, Binding{}, t0.Add(11 * time.Minute), Keep, 0},
		"ready but still tainted: the return is decided first": {task(policyv1alpha1.PurgeModeGracefully), cluster("m1", metav1.ConditionTrue,
			corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute}), healthy, t0, Keep, 0},
		"just back: purge waits for the cluster to settle": {task(policyv1alpha1.PurgeModeGracefully), backAt(t0.Add(-20 * time.Second)), healthy, t0, Keep, 40 * time.Second},
		"back and settled, not taken back: purged":         {task(policyv1alpha1.PurgeModeGracefully), backAt(t0.Add(-2 * time.Minute)), healthy, t0, Complete, 0},
		"deprecated Graciously acts as Gracefully":         {task(policyv1alpha1.PurgeModeGraciously), up, placed, t0, Keep, 10 * time.Minute}, //nolint:staticcheck // SA1019: the deprecated spelling on purpose
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, wait := Assess(tc.task, tc.cluster, tc.binding, DefaultGracePeriod, tc.now)
			if got != tc.want || wait != tc.wantWait {
				t.Errorf("Assess = %v, %s; want %v, %s", got, wait, tc.want, tc.wantWait)
			}
		})
	}
}

func TestReplacementHealthy(t *testing.T) {
	conds := []metav1.Condition{
		{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, ObservedGeneration: 3},
		{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: 3},
	}
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 2, Clusters: []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 2}}}
	status := &workv1alpha2.ResourceBindingStatus{Conditions: conds, AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnhealthy}, // the evicted copy does not count
		{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceHealthy},
	}}
	if !ReplacementHealthy(3, spec, status) {
		t.Error("healthy replacement on m2 not recognised")
	}
	if ReplacementHealthy(4, spec, status) {
		t.Error("a generation the scheduler and executor have not handled counts as healthy")
	}
	if ReplacementHealthy(3, &workv1alpha2.ResourceBindingSpec{Replicas: 2}, status) {
		t.Error("a binding scheduled nowhere counts as healthy (Karmada #7455)")
	}
	status.AggregatedStatus[1].Health = workv1alpha2.ResourceUnknown
	if ReplacementHealthy(3, spec, status) {
		t.Error("Unknown health counts as healthy")
	}
}

func TestClusterHealthyAndReturnable(t *testing.T) {
	noExec := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute}
	taskBy := func(producer string) *workv1alpha2.GracefulEvictionTask {
		return &workv1alpha2.GracefulEvictionTask{FromCluster: "m1", Producer: producer}
	}
	if !Returnable(taskBy("TaintManager"), cluster("m1", metav1.ConditionTrue)) {
		t.Error("a recovered cluster is not returnable")
	}
	if Returnable(taskBy("TaintManager"), cluster("m1", metav1.ConditionTrue, noExec)) {
		t.Error("a cluster still tainted NoExecute is returnable")
	}
	if Returnable(taskBy("ApplicationFailover"), cluster("m1", metav1.ConditionTrue)) {
		t.Error("an application failover returns to the cluster it failed on")
	}
	if ClusterHealthy(cluster("m1", metav1.ConditionFalse)) {
		t.Error("a not-ready cluster is healthy")
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(1, 2)
	for i := range 2 {
		if ok, _ := l.Take(t0); !ok {
			t.Fatalf("take %d within the burst refused", i)
		}
	}
	ok, wait := l.Take(t0)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("take beyond the burst = %t, %s; want refused with a wait up to 1s", ok, wait)
	}
	if ok, _ := l.Take(t0.Add(time.Second)); !ok {
		t.Error("a token did not come back after a second")
	}
	unlimited := NewLimiter(0, 0)
	for range 1000 {
		if ok, _ := unlimited.Take(t0); !ok {
			t.Fatal("unlimited limiter refused")
		}
	}
}
