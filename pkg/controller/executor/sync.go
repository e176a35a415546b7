package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/rebalance"
	"github.com/atoll-dev/atoll/pkg/scheduler"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// clusterResult is the outcome of one cluster's sync.
type clusterResult struct {
	item workv1alpha2.AggregatedStatusItem
	// current: the member runs the manifest of the current template.
	current bool
	// written: this sync applied the manifest to the member.
	written bool
	// reflected is the member object's whole reflected status as JSON, for
	// aggregation (item.Status may carry a note instead when it is too
	// large for the binding).
	reflected []byte
	err       error
	// interpretErr is a customization script failing for this cluster.
	interpretErr error
	// notReady says why a baseline's object is not ready (see baselineRule).
	notReady string
	// listing, when set, is the member's first list of the kind, still
	// under way: nothing is known about this cluster yet.
	listing *memberList
}

// firstListGrace is how long a member cache's first list may take before
// it counts as the member failing (errNotSynced); until then a binding
// placed there waits, its status untouched (parked).
const firstListGrace = 2 * time.Minute

// listing reports whether any cluster's cache is still making its first
// list.
func listing(results []clusterResult) bool {
	for _, res := range results {
		if res.listing != nil {
			return true
		}
	}
	return false
}

// interpretationFailed: the kind's script failed, so nothing is applied;
// the binding's Interpreted condition names the script.
func (res clusterResult) interpretationFailed(err error) clusterResult {
	res.interpretErr = err
	res.item.AppliedMessage = text.Truncate(err.Error(), maxItemMessage)
	return res
}

func (r *reconciler) sync(ctx context.Context, b client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) (reconcile.Result, error) {
	key := client.ObjectKeyFromObject(b)
	if r.awaitsFirstSchedule(key, b, spec, status) {
		// Nothing to apply or withdraw yet, and a status written now
		// ("no clusters") would be overwritten within milliseconds: the
		// scheduler's write brings the binding back.
		return reconcile.Result{}, nil
	}
	template, gvr, err := r.template(ctx, key, spec)
	if errors.Is(err, errTemplatesListing) {
		return reconcile.Result{}, nil // parked until the list is in
	}
	if apierrors.IsNotFound(err) {
		// The detector removes bindings of deleted templates.
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	gvk := gvr.GroupVersion().WithKind(template.GetKind())
	gk := gvk.GroupKind()
	hasReplicas := r.interp.HasReplicas(ctx, gvk)

	targets := map[string]int32{}
	for _, t := range spec.Clusters {
		targets[t.Name] = t.Replicas
	}
	suspended := spec.Suspension != nil && ptrTrue(spec.Suspension.Dispatching)
	overrides, err := r.overridePolicies(ctx, template)
	if err != nil {
		return reconcile.Result{}, err
	}

	var bounds map[string]rebalance.Bounds
	if interpreter.IsAutoscaler(gk) {
		bounds = r.autoscalerBounds(ctx, template)
	}

	rule := baselineRuleOf(b, spec)
	reachedBefore := r.reached.of(key, status)
	results := make([]clusterResult, len(spec.Clusters))
	var wg sync.WaitGroup
	var retry time.Duration // soonest retry of a member skipped as unresponsive
	unavailable := func(cluster string) string {
		if why := r.notReady(ctx, cluster); why != "" {
			return why
		}
		why, left := r.unresponsive.skip(cluster)
		if why != "" && (retry == 0 || left < retry) {
			retry = left
		}
		return why
	}
	for i, t := range spec.Clusters {
		if why := unavailable(t.Name); why != "" {
			// One dead member must not hold every binding placed on it for a
			// request timeout: it is not called until it is Ready again (the
			// Ready transition re-runs this binding).
			results[i] = clusterResult{item: workv1alpha2.AggregatedStatusItem{ClusterName: t.Name, Health: workv1alpha2.ResourceUnknown, AppliedMessage: why}}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var replicas *int64
			if hasReplicas && spec.Replicas > 0 {
				n := int64(t.Replicas)
				replicas = &n
			}
			var hpa *rebalance.Bounds
			if bb, ok := bounds[t.Name]; ok {
				hpa = &bb
			}
			held := ""
			switch {
			case suspended || suspendedOn(spec, t.Name):
				held = "dispatching is suspended"
			case rule != nil:
				held = rule.holds(t.Name, spec.Resource.ResourceVersion)
			}
			reached := slices.Contains(reachedBefore, t.Name)
			results[i] = r.syncCluster(ctx, b, spec, t.Name, reached, template, replicas, hpa, held, overrides, rule)
			r.syncs[syncOutcome(results[i])].Inc()
		}()
	}
	wg.Wait()
	if rule != nil {
		for i := range results {
			rule.finish(&results[i])
		}
	}

	// Withdraw from clusters that left the placement: those the status lists
	// and those applied to since (the status write may lag behind, or have
	// lost a race, when the placement changes again).
	for _, res := range results {
		if res.item.Applied || res.reflected != nil {
			r.reached.remember(key, res.item.ClusterName)
		}
	}
	if listing(results) {
		// A status written now would record the copies there as missing
		// and be undone once the list is in: after a restart with 20,000
		// templates that was two writes for each of 1,549 bindings (issue
		// 14). Nothing is withdrawn or written until every cache knows;
		// the binding is parked until then.
		r.parkUntilListed(key, results)
		return reconcile.Result{}, nil
	}
	var errs []error
	var withdrawn withdrawals
	leaving, kept := planWithdrawals(r.reached.of(key, status), targets, spec, keepsData(b, gk), suspended, unavailable)
	for _, cluster := range leaving {
		deleted, err := r.withdraw(ctx, b, spec, cluster, template)
		if err != nil {
			r.unresponsive.observe(cluster, err)
			errs = append(errs, err)
			kept[cluster] = "withdrawal pending" // keep tracking it until gone
			if why := waitReason(err); why != "" {
				kept[cluster] += ": " + why
			}
			continue
		}
		if deleted {
			withdrawn.add(cluster)
		}
		r.reached.forget(key, cluster)
	}
	withdrawn.record(r, b, spec)

	sum := summarize(status, results, kept, len(spec.Clusters), b.GetGeneration())
	newStatus := sum.status
	// The scheduler's part of a new placement waits for this write.
	handed := r.opts.Handoff.Apply(b.GetUID(), b.GetGeneration(), newStatus)
	dispatching := setDispatching(&newStatus.Conditions, spec, b.GetGeneration())
	errs = append(errs, sum.errs...)
	interpretErr := sum.interpretErr
	allApplied, allCurrent, reflected := sum.allApplied, sum.allCurrent, sum.aggregate

	result := reconcile.Result{RequeueAfter: retry}
	if !semantic.Equal(status, newStatus) {
		if wait := r.holdBack(key, status, newStatus); wait > 0 && !handed {
			// Inside the coalescing window: the binding's status and the
			// template's aggregate wait for its end together.
			if result.RequeueAfter == 0 || wait < result.RequeueAfter {
				result.RequeueAfter = wait
			}
			if len(errs) > 0 {
				return result, fmt.Errorf("binding %s: %v", key, errs)
			}
			return result, nil
		}
	}

	// The template's status is aggregated before the binding's is written,
	// so that a failing aggregation script shows in the same write.
	aggregated, aggErr := r.aggregateTemplateStatus(ctx, key, spec.Resource.ResourceVersion, template, gvr, reflected, allCurrent && allApplied && !suspended)
	if _, ok := interpreter.AsError(aggErr); ok {
		if interpretErr == nil {
			interpretErr = aggErr
		}
	} else if aggErr != nil {
		errs = append(errs, aggErr)
	}
	interpreter.RecordFailure(&newStatus.Conditions, b.GetGeneration(), interpretErr, executorOperations...)

	// Karmada records AggregateStatusSucceed on every aggregation; atoll
	// on a template status write, or, for a kind with nothing to aggregate
	// (a ClusterIP Service), when the binding's status changes with every
	// cluster current — never on an unchanged resync, so restarts stay
	// silent.
	complete := allCurrent && allApplied && !suspended && !semantic.Equal(status.AggregatedStatus, newStatus.AggregatedStatus)
	if aggErr == nil && (aggregated || complete) {
		events.OnBindingAndTemplate(r.recorder, b, spec, false, events.AggregateStatusSucceed, "AggregateStatus",
			"Update resource with AggregatedStatus successfully.")
	}
	if dispatching != nil {
		events.OnBindingAndTemplate(r.recorder, b, spec, false, events.WorkDispatching, "Dispatch", "%s", dispatching.Message)
	}
	if wrote := written(results); wrote > 0 && len(errs) == 0 {
		events.OnBindingAndTemplate(r.recorder, b, spec, false, events.SyncWorkSucceed, "Sync",
			"Sync work of %s(%s) successful: applied to %d cluster(s).", r.kind.Kind.Kind(), key, wrote)
	}
	if !semantic.Equal(status, newStatus) {
		wait, err := r.writeStatus(ctx, b, newStatus)
		if err != nil {
			errs = append(errs, err)
		}
		if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
			result.RequeueAfter = wait
		}
		if handed && err == nil && wait == 0 {
			r.opts.Handoff.Done(b.GetUID(), b.GetGeneration())
		}
	} else if handed {
		r.opts.Handoff.Done(b.GetUID(), b.GetGeneration())
	}
	if len(errs) > 0 {
		return result, fmt.Errorf("binding %s: %v", key, errs)
	}
	return result, nil
}

// awaitsFirstSchedule reports whether b is new and not yet placed by the
// scheduler that will place it: no clusters, none reached, and the scheduler
// has not seen this generation.
func (r *reconciler) awaitsFirstSchedule(key types.NamespacedName, b client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	return len(spec.Clusters) == 0 && status.SchedulerObservedGeneration < b.GetGeneration() &&
		len(r.reached.of(key, status)) == 0 && scheduler.WillSchedule(b, spec, status)
}

// errTemplatesListing: the binding's template is not cached and the list
// that may bring it is under way; the binding is parked until it is in.
var errTemplatesListing = errors.New("templates of the resource are being listed")

// template returns the binding's template, from the cache when the binding
// still records the same template resourceVersion.
func (r *reconciler) template(ctx context.Context, key types.NamespacedName, spec *workv1alpha2.ResourceBindingSpec) (*unstructured.Unstructured, schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(spec.Resource.APIVersion)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("binding %s: resource.apiVersion: %w", key, err)
	}
	mapping, err := r.mapper.RESTMapping(gv.WithKind(spec.Resource.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("binding %s: mapping %s: %w", key, spec.Resource.Kind, err)
	}
	gvr := mapping.Resource
	if t, ok := r.templates.Get(key, spec.Resource.ResourceVersion); ok {
		return t, gvr, nil
	}
	if r.templateLists.listing(mapping) {
		r.parked.park("templates/"+gvr.String(), reconcile.Request{NamespacedName: key},
			func() bool { return r.templateLists.underWay(gvr) })
		return nil, gvr, errTemplatesListing
	}
	if t, ok := r.templates.Get(key, spec.Resource.ResourceVersion); ok {
		return t, gvr, nil // brought by the list
	}
	t, err := r.dynamic.Resource(gvr).Namespace(spec.Resource.Namespace).Get(ctx, spec.Resource.Name, metav1.GetOptions{})
	if err != nil {
		return nil, gvr, err
	}
	r.templates.Put(key, spec.Resource.ResourceVersion, t)
	return t, gvr, nil
}

// heldClusters are the clusters whose copy a graceful eviction task keeps
// (purge mode Gracefully or Never, or suppressDeletion).
func heldClusters(spec *workv1alpha2.ResourceBindingSpec) map[string]bool {
	held := map[string]bool{}
	for i := range spec.GracefulEvictionTasks {
		if eviction.Holds(&spec.GracefulEvictionTasks[i]) {
			held[spec.GracefulEvictionTasks[i].FromCluster] = true
		}
	}
	return held
}

// notReady says why cluster is not to be called now ("" when it may be):
// its Ready condition is False or Unknown. A Cluster without a Ready
// condition yet (just joined) is tried.
func (r *reconciler) notReady(ctx context.Context, cluster string) string {
	// Read only, and called for every binding and cluster: the cached
	// Cluster is not copied (its status is large).
	c := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: cluster}, c, client.UnsafeDisableDeepCopy); err != nil {
		return "" // the member call reports it
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond == nil || cond.Status == metav1.ConditionTrue {
		return ""
	}
	return fmt.Sprintf("cluster %s is not Ready (%s); waiting for it", cluster, cond.Reason)
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// Messages of the Dispatching condition and its WorkDispatching event.
const (
	dispatchingSuspendedMessage = "Dispatching is suspended: nothing is applied to or deleted from member clusters."
	dispatchingResumedMessage   = "Dispatching resumed: the binding is being dispatched to member clusters."
)

// setDispatching keeps the Dispatching condition in conds: False while
// dispatching is suspended for the binding or some of its clusters, True
// once it resumes, absent on a binding never suspended. It returns the
// condition when its status changed (the event to record), else nil.
func setDispatching(conds *[]metav1.Condition, spec *workv1alpha2.ResourceBindingSpec, generation int64) *metav1.Condition {
	var on []string
	for _, t := range spec.Clusters {
		if suspendedOn(spec, t.Name) {
			on = append(on, t.Name)
		}
	}
	prev := meta.FindStatusCondition(*conds, workv1alpha2.Dispatching)
	cond := metav1.Condition{Type: workv1alpha2.Dispatching, ObservedGeneration: generation}
	switch {
	case spec.Suspension != nil && ptrTrue(spec.Suspension.Dispatching):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha2.BindingReasonSuspendDispatching, dispatchingSuspendedMessage
	case len(on) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha2.BindingReasonSuspendDispatching
		cond.Message = fmt.Sprintf("Dispatching to cluster(s) %s is suspended.", strings.Join(on, ", "))
	case prev == nil:
		return nil
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, workv1alpha2.BindingReasonDispatching, dispatchingResumedMessage
	}
	changed := prev == nil || prev.Status != cond.Status
	meta.SetStatusCondition(conds, cond)
	if !changed {
		return nil
	}
	return &cond
}

// suspendedOn reports whether dispatching to cluster alone is suspended
// (suspension.dispatchingOnClusters).
func suspendedOn(spec *workv1alpha2.ResourceBindingSpec, cluster string) bool {
	if spec.Suspension == nil || spec.Suspension.DispatchingOnClusters == nil {
		return false
	}
	return slices.Contains(spec.Suspension.DispatchingOnClusters.ClusterNames, cluster)
}

// maxConditionMessage bounds the FullyApplied message, which lists the
// failing clusters' reasons; maxItemMessage bounds one cluster's message (a
// member's error can quote a whole object).
const (
	maxConditionMessage = 2048
	maxItemMessage      = 1024
)

// planWithdrawals decides, for each cluster a binding's object may be in
// (reached) that is no longer a target, whether the copy is withdrawn or
// kept, and why it is kept.
func planWithdrawals(reached []string, targets map[string]int32, spec *workv1alpha2.ResourceBindingSpec, holdsData, suspended bool,
	unavailable func(cluster string) string) (withdraw []string, kept map[string]string) {
	kept = map[string]string{}
	held := heldClusters(spec)
	for _, cluster := range reached {
		if _, ok := targets[cluster]; ok {
			continue
		}
		why := unavailable(cluster)
		switch {
		case held[cluster]:
			// A graceful eviction task keeps the old copy, untouched, until
			// the scheduler ends the task.
			kept[cluster] = "kept by a graceful eviction task"
		case suspended || suspendedOn(spec, cluster):
			// Suspended dispatching stops deletions as well as applies.
			kept[cluster] = "dispatching is suspended; withdrawal waits"
		case why != "":
			kept[cluster] = "withdrawal pending: " + why
		case holdsData:
			// A volume that followed its workload stays when the workload
			// moves or goes: only deleting its template removes it.
			kept[cluster] = fmt.Sprintf("kept: a %s holds data; it is removed from members only when its template is deleted", spec.Resource.Kind)
		default:
			withdraw = append(withdraw, cluster)
		}
	}
	return withdraw, kept
}

// summary is a binding's new status from its clusters' results.
type summary struct {
	status                 *workv1alpha2.ResourceBindingStatus
	allApplied, allCurrent bool
	// aggregate are the items status aggregation reads, with whole
	// reflected statuses (even ones too large for the binding).
	aggregate    []workv1alpha2.AggregatedStatusItem
	errs         []error
	interpretErr error
}

// summarize builds the binding status from the old one, the results of the
// target clusters and the copies kept elsewhere (cluster: why): one item
// per cluster, sorted, and the FullyApplied condition. Kept copies keep
// their last status, now saying why they stay.
func summarize(old *workv1alpha2.ResourceBindingStatus, results []clusterResult, kept map[string]string, targets int, generation int64) summary {
	out := summary{status: old.DeepCopy(), allApplied: len(results) > 0, allCurrent: true}
	st := out.status
	st.AggregatedStatus = nil
	var failed, reasons []string
	for _, res := range results {
		st.AggregatedStatus = append(st.AggregatedStatus, res.item)
		if res.err != nil {
			out.errs = append(out.errs, res.err)
		}
		if res.interpretErr != nil && out.interpretErr == nil {
			out.interpretErr = res.interpretErr
		}
		if !res.item.Applied {
			out.allApplied = false
			failed = append(failed, res.item.ClusterName)
			if res.item.AppliedMessage != "" {
				reasons = append(reasons, res.item.AppliedMessage)
			}
		}
		out.allCurrent = out.allCurrent && res.current
		if res.reflected != nil {
			item := res.item
			item.Status = &runtime.RawExtension{Raw: res.reflected}
			out.aggregate = append(out.aggregate, item)
		}
	}
	left := maps.Clone(kept)
	for _, item := range old.AggregatedStatus {
		if msg, ok := left[item.ClusterName]; ok {
			if item.Applied || item.Status != nil {
				item.AppliedMessage = msg
			}
			st.AggregatedStatus = append(st.AggregatedStatus, item)
			delete(left, item.ClusterName)
		}
	}
	for cluster, msg := range left { // reached, withdrawal failed or held, not yet in status
		st.AggregatedStatus = append(st.AggregatedStatus,
			workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown, AppliedMessage: msg})
	}
	sort.Slice(st.AggregatedStatus, func(i, j int) bool {
		return st.AggregatedStatus[i].ClusterName < st.AggregatedStatus[j].ClusterName
	})
	cond := metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, Reason: "FullyAppliedSuccess",
		Message: "All works have been successfully applied", ObservedGeneration: generation}
	switch {
	case targets == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NoClusters", "The binding is not scheduled to any cluster"
	case !out.allApplied:
		cond.Status, cond.Reason = metav1.ConditionFalse, "FullyAppliedFailed"
		cond.Message = fmt.Sprintf("Failed to apply to cluster(s) %v", failed)
		if len(reasons) > 0 {
			cond.Message = text.Truncate(cond.Message+": "+strings.Join(reasons, "; "), maxConditionMessage)
		}
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	meta.RemoveStatusCondition(&st.Conditions, workv1alpha2.Released)
	return out
}

// written counts the clusters this sync applied to.
func written(results []clusterResult) int {
	n := 0
	for _, res := range results {
		if res.written {
			n++
		}
	}
	return n
}
