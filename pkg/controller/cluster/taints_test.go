package cluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

func TestDesiredTaints(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(earlier.Add(time.Hour))
	notReady := corev1.Taint{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &earlier}
	unreachable := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &earlier}
	unreachableNoExecute := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}
	custom := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	newTaint := func(key string) corev1.Taint {
		return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now}
	}
	newNoExecute := func(key string) corev1.Taint {
		return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now}
	}
	cases := map[string]struct {
		taints      []corev1.Taint
		ready       metav1.ConditionStatus
		noExecute   bool
		want        []corev1.Taint
		wantChanged bool
	}{
		"with NoExecute, unknown adds unreachable with both effects": {
			taints: []corev1.Taint{custom}, ready: metav1.ConditionUnknown, noExecute: true,
			want:        []corev1.Taint{custom, newTaint(clusterv1alpha1.TaintClusterUnreachable), newNoExecute(clusterv1alpha1.TaintClusterUnreachable)},
			wantChanged: true,
		},
		"a NoExecute taint without timeAdded gets one": {
			taints: []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}, custom}, ready: metav1.ConditionTrue, noExecute: true,
			want:        []corev1.Taint{newNoExecute("maintenance"), custom},
			wantChanged: true,
		},
		"a NoExecute taint without timeAdded gets one without NoExecute health taints too": {
			taints: []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}, ready: metav1.ConditionTrue,
			want:        []corev1.Taint{newNoExecute("maintenance")},
			wantChanged: true,
		},
		"with NoExecute, an existing NoExecute taint keeps its time": {
			taints: []corev1.Taint{unreachable, unreachableNoExecute}, ready: metav1.ConditionUnknown, noExecute: true,
			want: []corev1.Taint{unreachable, unreachableNoExecute},
		},
		"with NoExecute, ready removes both effects": {
			taints: []corev1.Taint{unreachableNoExecute, custom, unreachable}, ready: metav1.ConditionTrue, noExecute: true,
			want:        []corev1.Taint{custom},
			wantChanged: true,
		},
		"with NoExecute, false swaps unreachable for not-ready, both effects": {
			taints: []corev1.Taint{unreachable, unreachableNoExecute}, ready: metav1.ConditionFalse, noExecute: true,
			want:        []corev1.Taint{newTaint(clusterv1alpha1.TaintClusterNotReady), newNoExecute(clusterv1alpha1.TaintClusterNotReady)},
			wantChanged: true,
		},
		"ready, no taints": {
			ready: metav1.ConditionTrue,
		},
		"ready removes both health taints, keeps others": {
			taints:      []corev1.Taint{custom, notReady, unreachable},
			ready:       metav1.ConditionTrue,
			want:        []corev1.Taint{custom},
			wantChanged: true,
		},
		"not ready adds not-ready": {
			taints:      []corev1.Taint{custom},
			ready:       metav1.ConditionFalse,
			want:        []corev1.Taint{custom, newTaint(clusterv1alpha1.TaintClusterNotReady)},
			wantChanged: true,
		},
		"unknown swaps not-ready for unreachable": {
			taints:      []corev1.Taint{notReady},
			ready:       metav1.ConditionUnknown,
			want:        []corev1.Taint{newTaint(clusterv1alpha1.TaintClusterUnreachable)},
			wantChanged: true,
		},
		"unknown keeps an existing unreachable taint and its time": {
			taints: []corev1.Taint{unreachable, custom},
			ready:  metav1.ConditionUnknown,
			want:   []corev1.Taint{unreachable, custom},
		},
		"without NoExecute, an operator's NoExecute health taint stays": {
			taints: []corev1.Taint{unreachableNoExecute},
			ready:  metav1.ConditionTrue,
			want:   []corev1.Taint{unreachableNoExecute},
		},
		"no Ready condition changes nothing": {
			taints: []corev1.Taint{notReady, custom},
			ready:  "",
			want:   []corev1.Taint{notReady, custom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, _, changed := desiredTaints(tc.taints, tc.ready, now, tc.noExecute)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %t, want %t", changed, tc.wantChanged)
			}
		})
	}
}

// TestSpecChanged: the controller's own taint and status writes do not
// trigger a reconcile; connection changes do.
func TestSpecChanged(t *testing.T) {
	base := &clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{APIEndpoint: "https://a"}}
	tainted := base.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}}
	tainted.Status.KubernetesVersion = "v1"
	moved := base.DeepCopy()
	moved.Spec.APIEndpoint = "https://b"
	deleting := base.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	cases := map[string]struct {
		newObj *clusterv1alpha1.Cluster
		want   bool
	}{
		"taints and status only": {tainted, false},
		"endpoint":               {moved, true},
		"deletion":               {deleting, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := specChanged().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: tc.newObj}); got != tc.want {
				t.Errorf("got %t, want %t", got, tc.want)
			}
		})
	}
}
