package executor

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/baseline"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// baselineRule is how the executor treats a binding a ClusterBaseline
// places (spec.schedulerName atoll-baseline): the baseline controller
// allows each cluster one template version (a change waits until the
// component's prerequisites are ready there), and health is readiness by
// the baseline's rule, so the controller can gate dependents on it.
type baselineRule struct {
	// expression is the component's readinessExpression; empty: kstatus.
	expression string
	// allowed maps cluster → the template resourceVersion that may be
	// applied there; nil when the annotation does not parse.
	allowed map[string]string
	// invalid explains an unparsable allowed-revisions annotation.
	invalid string
}

// baselineRuleOf returns the rule of a baseline binding, nil for others.
func baselineRuleOf(b client.Object, spec *workv1alpha2.ResourceBindingSpec) *baselineRule {
	if spec.SchedulerName != appsv1alpha1.SchedulerName {
		return nil
	}
	annotations := b.GetAnnotations()
	rule := &baselineRule{expression: annotations[appsv1alpha1.ReadinessAnnotation]}
	if raw, ok := annotations[appsv1alpha1.AllowedRevisionsAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &rule.allowed); err != nil {
			rule.allowed, rule.invalid = nil, fmt.Sprintf("annotation %s is not a JSON map of cluster to version: %v", appsv1alpha1.AllowedRevisionsAnnotation, err)
		}
	}
	return rule
}

// holds says why the template version rv must not be applied to cluster
// yet ("" when it may be). A binding whose annotation does not parse holds
// every cluster: applying a version the baseline did not allow could run
// an operator before its CRD.
func (rule *baselineRule) holds(cluster, rv string) string {
	if rule.invalid != "" {
		return rule.invalid
	}
	if rule.allowed[cluster] != rv {
		return "waiting for the baseline: this version rolls out here once the component's prerequisites are ready"
	}
	return ""
}

// observe sets res's health from the object's readiness.
func (rule *baselineRule) observe(res *clusterResult, live *unstructured.Unstructured) {
	rd := baseline.Evaluate(live, rule.expression)
	switch {
	case rd.Ready:
		res.item.Health, res.notReady = workv1alpha2.ResourceHealthy, ""
	case rd.Failed:
		res.item.Health, res.notReady = workv1alpha2.ResourceUnhealthy, rd.Message
	default:
		res.item.Health, res.notReady = workv1alpha2.ResourceUnknown, rd.Message
	}
}

// finish makes a result say ready only for the current version, applied,
// and says why an applied object is not ready.
func (rule *baselineRule) finish(res *clusterResult) {
	if res.item.Health == workv1alpha2.ResourceHealthy && (!res.item.Applied || !res.current) {
		res.item.Health = workv1alpha2.ResourceUnknown
	}
	if res.item.Applied && res.item.Health != workv1alpha2.ResourceHealthy && res.item.AppliedMessage == "" && res.notReady != "" {
		res.item.AppliedMessage = text.Truncate("not ready: "+res.notReady, maxItemMessage)
	}
}
