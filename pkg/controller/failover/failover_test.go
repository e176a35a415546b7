package failover

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func seconds(n int64) *int64 { return &n }

func TestTaintEvictions(t *testing.T) {
	added := &metav1.Time{Time: t0}
	unreachable := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: added}
	noSchedule := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: added}
	clusters := map[string]*clusterv1alpha1.Cluster{
		"m1": {ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1alpha1.ClusterSpec{Taints: []corev1.Taint{noSchedule, unreachable}}},
		"m2": {ObjectMeta: metav1.ObjectMeta{Name: "m2"}},
	}
	tolerate := func(secs *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	now := t0.Add(10 * time.Second)
	cases := map[string]struct {
		tolerations []corev1.Toleration
		wantDue     *time.Time
	}{
		"untolerated: now":                            {nil, &now},
		"tolerated for 60s: timeAdded + 60s":          {tolerate(seconds(60)), new(t0.Add(time.Minute))},
		"tolerated forever: never":                    {tolerate(nil), nil},
		"the shortest tolerationSeconds wins":         {append(tolerate(seconds(60)), tolerate(seconds(30))...), new(t0.Add(30 * time.Second))},
		"forever and 30s: 30s (as Kubernetes)":        {append(tolerate(nil), tolerate(seconds(30))...), new(t0.Add(30 * time.Second))},
		"a NoSchedule-only toleration does not count": {[]corev1.Toleration{{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, &now},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &reconciler{opts: Options{}}
			r.opts.defaults()
			spec := &workv1alpha2.ResourceBindingSpec{
				Placement: &policyv1alpha1.Placement{ClusterTolerations: tc.tolerations},
				Clusters:  []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}},
			}
			got := r.taintEvictions(context.Background(), spec, clusters, now)
			if tc.wantDue == nil {
				if len(got) != 0 {
					t.Fatalf("got evictions %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].req.Cluster != "m1" || !got[0].due.Equal(*tc.wantDue) {
				t.Fatalf("got %+v, want one eviction from m1 due %s", got, tc.wantDue)
			}
			if got[0].req.Producer != workv1alpha2.EvictionProducerTaintManager || got[0].req.PurgeMode != policyv1alpha1.PurgeModeGracefully {
				t.Errorf("request = %+v", got[0].req)
			}
		})
	}
}

func TestApplicationEvictions(t *testing.T) {
	r := &reconciler{unhealthy: newUnhealthyTracker()}
	tol := int32(60)
	spec := &workv1alpha2.ResourceBindingSpec{
		Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: &tol}}},
		Clusters: []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}},
	}
	status := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m1", Health: workv1alpha2.ResourceUnhealthy},
		{ClusterName: "m2", Health: workv1alpha2.ResourceUnknown}, // unreachable is the taint manager's business
	}}
	got := r.applicationEvictions("ns/web", spec, status, t0)
	if len(got) != 1 || got[0].req.Cluster != "m1" || !got[0].due.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first look: %+v, want m1 due in 60s", got)
	}
	// Still unhealthy later: the streak keeps its start.
	got = r.applicationEvictions("ns/web", spec, status, t0.Add(30*time.Second))
	if len(got) != 1 || !got[0].due.Equal(t0.Add(time.Minute)) {
		t.Fatalf("second look: %+v, want the same deadline", got)
	}
	// Healthy in between: the streak starts again.
	status.AggregatedStatus[0].Health = workv1alpha2.ResourceHealthy
	if got := r.applicationEvictions("ns/web", spec, status, t0.Add(40*time.Second)); len(got) != 0 {
		t.Fatalf("healthy: %+v, want none", got)
	}
	status.AggregatedStatus[0].Health = workv1alpha2.ResourceUnhealthy
	got = r.applicationEvictions("ns/web", spec, status, t0.Add(50*time.Second))
	if len(got) != 1 || !got[0].due.Equal(t0.Add(110*time.Second)) {
		t.Fatalf("after recovery: %+v, want a new deadline", got)
	}
	if got[0].req.PurgeMode != policyv1alpha1.PurgeModeGracefully || got[0].req.Producer != workv1alpha2.EvictionProducerApplicationFailover {
		t.Errorf("request = %+v", got[0].req)
	}
}
