package eviction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Stateful failover (Karmada's StatefulFailoverInjection): a policy's
// failover statePreservation rules read values from the evicted copy's
// status when the eviction starts; the task keeps them
// (preservedLabelState) and the executor puts them on the replacement as
// labels, so an application that moves (a Flink job, say) can resume from
// the state its old copy reached.

// PreservedState evaluates rules against the status cluster last reported
// for the binding. An error means the state cannot be read yet (no status
// from that cluster) or a rule does not fit it; the eviction waits rather
// than move the application without the state it was asked to keep.
func PreservedState(rules *policyv1alpha1.StatePreservation, status *workv1alpha2.ResourceBindingStatus, cluster string) (map[string]string, error) {
	if rules == nil || len(rules.Rules) == 0 {
		return nil, nil
	}
	i := slices.IndexFunc(status.AggregatedStatus, func(it workv1alpha2.AggregatedStatusItem) bool { return it.ClusterName == cluster })
	if i < 0 || status.AggregatedStatus[i].Status == nil || len(status.AggregatedStatus[i].Status.Raw) == 0 {
		return nil, fmt.Errorf("the status of the application in cluster %s has not been collected yet", cluster)
	}
	var doc any
	if err := json.Unmarshal(status.AggregatedStatus[i].Status.Raw, &doc); err != nil {
		return nil, fmt.Errorf("the status from cluster %s: %w", cluster, err)
	}
	out := make(map[string]string, len(rules.Rules))
	for k, rule := range rules.Rules {
		value, err := evaluate(rule.JSONPath, doc)
		if err != nil {
			return nil, fmt.Errorf("statePreservation.rules[%d].jsonPath %q on the status from cluster %s: %w", k, rule.JSONPath, cluster, err)
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, fmt.Errorf("statePreservation.rules[%d] (label %s): value %q is not a label value: %s",
				k, rule.AliasLabelName, value, strings.Join(errs, "; "))
		}
		out[rule.AliasLabelName] = value
	}
	return out, nil
}

func evaluate(path string, doc any) (string, error) {
	j := jsonpath.New("statePreservation")
	if err := j.Parse(path); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := j.Execute(&buf, doc); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// StatePreservationFor is the policy's rules for evictions by producer:
// cluster failover's for taint evictions, application failover's for
// application failures.
func StatePreservationFor(f *policyv1alpha1.FailoverBehavior, producer string) *policyv1alpha1.StatePreservation {
	switch {
	case f == nil:
		return nil
	case producer == workv1alpha2.EvictionProducerApplicationFailover && f.Application != nil:
		return f.Application.StatePreservation
	case producer == workv1alpha2.EvictionProducerTaintManager && f.Cluster != nil:
		return f.Cluster.StatePreservation
	}
	return nil
}

// InjectedLabels are the preserved labels the copy on cluster gets, as
// Karmada injects them: only for an application that runs in one cluster
// (a move from one cluster to another), from the latest eviction task,
// when that task purges Directly and cluster is not one the application
// ran on before the failover.
func InjectedLabels(spec *workv1alpha2.ResourceBindingSpec, cluster string) map[string]string {
	if len(spec.Clusters) != 1 || len(spec.GracefulEvictionTasks) == 0 {
		return nil
	}
	task := &spec.GracefulEvictionTasks[len(spec.GracefulEvictionTasks)-1]
	if policyv1alpha1.NormalizePurgeMode(task.PurgeMode) != policyv1alpha1.PurgeModeDirectly ||
		slices.Contains(task.ClustersBeforeFailover, cluster) {
		return nil
	}
	return task.PreservedLabelState
}
