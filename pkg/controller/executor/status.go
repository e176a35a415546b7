package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// holdBack reports how long a change of the binding status from old to
// updated waits, 0 when it is written now. Inside StatusInterval of the
// binding's last write, churn (member counters, reflected statuses)
// coalesces into one write at the window's end; what other controllers act
// on goes at once: the set of clusters (after a restart, the status is where
// atoll finds the clusters it must withdraw from), a copy's Applied or
// Health, and FullyApplied.
func (r *reconciler) holdBack(key types.NamespacedName, old, updated *workv1alpha2.ResourceBindingStatus) time.Duration {
	wait := r.statusWrites.wait(key)
	if wait == 0 || urgentChange(old, updated) {
		return 0
	}
	bindingStatusWrites.WithLabelValues(r.kind.name(), "coalesced").Inc()
	return wait
}

// urgentChange reports whether updated changes what placement, failover,
// rebalance or baselines read from a binding status.
func urgentChange(old, updated *workv1alpha2.ResourceBindingStatus) bool {
	if !sameClusters(old, updated) {
		return true
	}
	for i := range old.AggregatedStatus {
		o, u := old.AggregatedStatus[i], updated.AggregatedStatus[i]
		if o.Applied != u.Applied || o.Health != u.Health {
			return true
		}
	}
	oc := meta.FindStatusCondition(old.Conditions, workv1alpha2.FullyApplied)
	uc := meta.FindStatusCondition(updated.Conditions, workv1alpha2.FullyApplied)
	return (oc == nil) != (uc == nil) || (oc != nil && oc.Status != uc.Status)
}

// writeStatus writes the binding status. The scheduler writes other parts
// of the same status (the Scheduled condition): WriteStatus's lock makes a
// racing write retry instead of dropping the other's condition. b may be
// the cache's object: WriteStatus, which writes the answer into the object
// it is given, gets a copy.
func (r *reconciler) writeStatus(ctx context.Context, b client.Object, status *workv1alpha2.ResourceBindingStatus) (time.Duration, error) {
	if retry, err := bindingkind.WriteStatus(ctx, r.client, b.DeepCopyObject().(client.Object), status); err != nil || retry > 0 {
		return retry, err
	}
	r.statusWrites.written(client.ObjectKeyFromObject(b))
	bindingStatusWrites.WithLabelValues(r.kind.name(), "written").Inc()
	return 0, nil
}

// aggregateTemplateStatus writes the members' summed status onto the
// template when it differs from what the template shows.
func (r *reconciler) aggregateTemplateStatus(ctx context.Context, key types.NamespacedName, recordedRV string, template *unstructured.Unstructured, gvr schema.GroupVersionResource,
	items []workv1alpha2.AggregatedStatusItem, allCurrent bool) (written bool, err error) {
	want, err := r.interp.AggregateStatus(ctx, template, items, allCurrent)
	if err != nil || want == nil {
		return false, err
	}
	have, _, _ := unstructured.NestedMap(template.Object, "status")
	changed := false
	for k, v := range want {
		if !sameStatusValue(have[k], v) {
			changed = true
			break
		}
	}
	if !changed {
		return false, nil
	}
	body, err := json.Marshal(map[string]any{"status": want})
	if err != nil {
		return false, err
	}
	updated, err := r.dynamic.Resource(gvr).Namespace(template.GetNamespace()).Patch(ctx, template.GetName(), types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: names.FieldManager}, "status")
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("aggregating status onto %s %s: %w", template.GetKind(), klog.KObj(template), err)
	}
	// The status write bumps the template's resourceVersion, not what the
	// binding records; cache the written object so the next comparison sees
	// this status without reading the template again.
	r.templates.Put(key, recordedRV, updated)
	return true, nil
}

// maxReflectedStatus bounds the member status one binding status item
// carries: a member object with a huge status (a CR listing thousands of
// entries) must not make its binding too large to write. A larger status
// is left out and replaced by a note saying so; aggregation onto the
// template still uses it.
const maxReflectedStatus = 16 << 10

// rawStatus encodes a reflected status once: whole, for aggregation, and
// bounded, for the binding.
func rawStatus(m map[string]any) (whole []byte, bounded *runtime.RawExtension) {
	if m == nil {
		return nil, nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, nil
	}
	if len(data) > maxReflectedStatus {
		note, _ := json.Marshal(map[string]any{"atoll.dev/omitted": fmt.Sprintf("status of %d bytes is over the %d-byte limit", len(data), maxReflectedStatus)})
		return data, &runtime.RawExtension{Raw: note}
	}
	return data, &runtime.RawExtension{Raw: data}
}

// sameStatusValue compares a template status field with the aggregated
// value. Integer status fields are omitempty: the API server drops a zero,
// so a missing field equals 0 (otherwise every settled Deployment, with
// unavailableReplicas 0, would be patched again on every sync).
func sameStatusValue(have, want any) bool {
	if have == nil {
		have = int64(0)
	}
	return semantic.Equal(normalizeNumber(have), normalizeNumber(want))
}

func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	return v
}

func sameClusters(a, b *workv1alpha2.ResourceBindingStatus) bool {
	if len(a.AggregatedStatus) != len(b.AggregatedStatus) {
		return false
	}
	for i := range a.AggregatedStatus {
		if a.AggregatedStatus[i].ClusterName != b.AggregatedStatus[i].ClusterName {
			return false
		}
	}
	return true
}
