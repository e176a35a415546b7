package baseline

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

func TestGates(t *testing.T) {
	created := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cb := func(mutate func(*appsv1alpha1.ClusterBaseline)) *appsv1alpha1.ClusterBaseline {
		c := &appsv1alpha1.ClusterBaseline{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.Time{Time: created}},
			Spec: appsv1alpha1.ClusterBaselineSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}}}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	prod := map[string]string{"tier": "prod"}
	later, earlier := created.Add(time.Minute), created.Add(-time.Minute)
	for name, tc := range map[string]struct {
		cb      *appsv1alpha1.ClusterBaseline
		labels  map[string]string
		created time.Time
		want    bool
	}{
		"joined after the baseline, not ready yet": {cb(nil), prod, later, true},
		"joining now (atoll join)":                 {cb(nil), prod, time.Time{}, true},
		"joined in the baseline's second":          {cb(nil), prod, created, true},
		"existed before the baseline":              {cb(nil), prod, earlier, false},
		"not selected":                             {cb(nil), map[string]string{"tier": "dev"}, later, false},
		"empty selector selects all": {cb(func(c *appsv1alpha1.ClusterBaseline) { c.Spec.ClusterSelector = nil }),
			nil, later, true},
		"baseline ready there once": {cb(func(c *appsv1alpha1.ClusterBaseline) {
			c.Status.Clusters = []appsv1alpha1.BaselineClusterStatus{{Name: "m1", BaselineReadyTime: &metav1.Time{Time: later}}}
		}), prod, later, false},
		"other clusters' readiness does not count": {cb(func(c *appsv1alpha1.ClusterBaseline) {
			c.Status.Clusters = []appsv1alpha1.BaselineClusterStatus{{Name: "m2", BaselineReadyTime: &metav1.Time{Time: later}}}
		}), prod, later, true},
		"baseline being deleted": {cb(func(c *appsv1alpha1.ClusterBaseline) { c.DeletionTimestamp = &metav1.Time{Time: later} }),
			prod, later, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Gates(tc.cb, "m1", tc.labels, tc.created); got != tc.want {
				t.Errorf("Gates = %v, want %v", got, tc.want)
			}
		})
	}
}
