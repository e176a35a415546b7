package executor

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestBaselineRule(t *testing.T) {
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		appsv1alpha1.AllowedRevisionsAnnotation: `{"m1":"7","m2":"6"}`,
	}}}
	if baselineRuleOf(b, &b.Spec) != nil {
		t.Fatal("a binding of the default scheduler has no baseline rule")
	}
	b.Spec.SchedulerName = appsv1alpha1.SchedulerName
	rule := baselineRuleOf(b, &b.Spec)
	if why := rule.holds("m1", "7"); why != "" {
		t.Errorf("the allowed version is held: %s", why)
	}
	if why := rule.holds("m2", "7"); why == "" {
		t.Error("a version not allowed on m2 is applied")
	}
	if why := rule.holds("m3", "7"); why == "" {
		t.Error("a cluster the map does not list is applied to")
	}
	b.Annotations[appsv1alpha1.AllowedRevisionsAnnotation] = "not json"
	if why := baselineRuleOf(b, &b.Spec).holds("m1", "7"); !strings.Contains(why, "not a JSON map") {
		t.Errorf("an unparsable annotation must hold everything, got %q", why)
	}

	// Health is readiness, and only for the current manifest, applied.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	res := clusterResult{item: workv1alpha2.AggregatedStatusItem{Applied: true}, current: true}
	rule.observe(&res, cm)
	rule.finish(&res)
	if res.item.Health != workv1alpha2.ResourceHealthy {
		t.Errorf("an applied, current ConfigMap is %s", res.item.Health)
	}
	res = clusterResult{item: workv1alpha2.AggregatedStatusItem{Applied: false}, current: false}
	rule.observe(&res, cm)
	rule.finish(&res)
	if res.item.Health == workv1alpha2.ResourceHealthy {
		t.Error("a held (old) copy counts as ready")
	}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}
	res = clusterResult{item: workv1alpha2.AggregatedStatusItem{Applied: true}, current: true}
	rule.observe(&res, widget)
	rule.finish(&res)
	if res.item.Health != workv1alpha2.ResourceUnknown || !strings.HasPrefix(res.item.AppliedMessage, "not ready: ") {
		t.Errorf("a custom resource without conditions: %s %q", res.item.Health, res.item.AppliedMessage)
	}
}
