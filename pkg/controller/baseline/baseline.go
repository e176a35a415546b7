package baseline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// ControllerName is the controller's name in --controllers.
const ControllerName = "baseline"

// Options configure the controller.
type Options struct {
	// Clock stamps state transitions. Default: the real clock.
	Clock clock.PassiveClock
	// RecheckInterval is how often a baseline with a component waiting for
	// its templates, or blocked by another policy's claim, looks again
	// (template creation and claims are seen through bindings; this is the
	// safety net). Default 30s.
	RecheckInterval time.Duration
}

type reconciler struct {
	client client.Client
	// reader reads templates live (only for components missing a binding).
	reader   client.Reader
	clock    clock.PassiveClock
	opts     Options
	recorder recorder.EventRecorder
}

// Reconcile delivers one baseline: generated policies, each component's
// placement and allowed versions per cluster, withdrawal in reverse order,
// and the status matrix.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var cb appsv1alpha1.ClusterBaseline
	if err := r.client.Get(ctx, req.NamespacedName, &cb); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	res, err := r.reconcile(ctx, &cb)
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(2).Info("Baseline or a binding changed meanwhile, retrying", "baseline", cb.Name)
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return res, err
}

func (r *reconciler) reconcile(ctx context.Context, cb *appsv1alpha1.ClusterBaseline) (ctrl.Result, error) {
	now := r.clock.Now().Truncate(time.Second)
	deleting := cb.DeletionTimestamp != nil
	if errs := baseline.Validate(&cb.Spec); len(errs) > 0 && !deleting {
		// Admission refuses these in atoll's API server; another API
		// server may store them. Nothing changes until the spec is fixed.
		return ctrl.Result{}, r.writeStatus(ctx, cb, cb.Status.Clusters, metav1.ConditionFalse, appsv1alpha1.BaselineReasonInvalidSpec, errs.ToAggregate().Error())
	}
	if !deleting && !controllerutil.ContainsFinalizer(cb, appsv1alpha1.BaselineFinalizer) {
		orig := cb.DeepCopy()
		controllerutil.AddFinalizer(cb, appsv1alpha1.BaselineFinalizer)
		if err := r.client.Patch(ctx, cb, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer of baseline %s: %w", cb.Name, err)
		}
	}
	var active []*appsv1alpha1.BaselineComponent
	if !deleting {
		for i := range cb.Spec.Components {
			active = append(active, &cb.Spec.Components[i])
		}
	}
	policies, err := r.ensurePolicies(ctx, cb, active)
	if err != nil {
		return ctrl.Result{}, err
	}
	in, err := r.observe(ctx, cb, active, policies, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	out := plan(in)
	markGated(cb, in, out.status)

	// Record before acting: the matrix (a prerequisite's readyTime) is
	// written before the placements it leads to, so a dependent's objects
	// are never older than the readiness status says they waited for.
	r.events(cb, out.status)
	observeMetrics(cb, out.status)
	status, reason, msg := summarize(cb, in, out.status)
	if err := r.writeStatus(ctx, cb, out.status, status, reason, msg); err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for name, c := range in.components {
		expression := ""
		if spec := componentOf(active, name); spec != nil {
			expression = spec.ReadinessExpression
		}
		for _, b := range c.objects {
			if err := r.writeBinding(ctx, cb, name, expression, c.active, b, out.decisions[name]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	// Policies of components gone from every cluster go last: their
	// templates are then released with nothing left in members.
	withdrawn := true
	for name, c := range in.components {
		if c.active {
			continue
		}
		if gone(c) || (c.keepsData && !dependentsPresent(in, name)) {
			if err := r.client.Delete(ctx, policies[name]); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting policy %s of baseline %s: %w", policies[name].Name, cb.Name, err)
			}
			continue
		}
		withdrawn = false
	}
	if deleting && withdrawn {
		orig := cb.DeepCopy()
		controllerutil.RemoveFinalizer(cb, appsv1alpha1.BaselineFinalizer)
		if err := r.client.Patch(ctx, cb, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("removing the finalizer of baseline %s: %w", cb.Name, err)
		}
		return ctrl.Result{}, nil
	}
	result := ctrl.Result{RequeueAfter: out.requeue}
	for _, c := range in.components {
		if c.active && (c.blocked != "" || c.bindings == 0) && (result.RequeueAfter == 0 || r.opts.RecheckInterval < result.RequeueAfter) {
			result.RequeueAfter = r.opts.RecheckInterval
		}
	}
	return result, nil
}

// observe gathers the plan's input: every component (active and being
// withdrawn) with its bindings' view of each cluster, and the clusters.
func (r *reconciler) observe(ctx context.Context, cb *appsv1alpha1.ClusterBaseline, active []*appsv1alpha1.BaselineComponent,
	policies map[string]*policyv1alpha1.ClusterPropagationPolicy, now time.Time) (input, error) {
	in := input{components: map[string]*component{}, matching: map[string]bool{}, previous: map[string]appsv1alpha1.BaselineClusterStatus{},
		clusterObjects: map[string]*clusterv1alpha1.Cluster{}, now: now}
	var names []string
	deps := map[string][]string{}
	for _, c := range active {
		timeout := appsv1alpha1.DefaultComponentTimeout
		if c.Timeout != nil {
			timeout = c.Timeout.Duration
		}
		in.components[c.Name] = &component{name: c.Name, active: true, gates: c.Gates(), timeout: timeout}
		names = append(names, c.Name)
		deps[c.Name] = c.DependsOn
	}
	var retiring []string
	for name, p := range policies {
		if _, ok := in.components[name]; !ok {
			retiring = append(retiring, name)
			deps[name] = dependsOnOf(p)
		}
	}
	sort.Strings(retiring)
	for _, name := range retiring {
		in.components[name] = &component{name: name}
	}
	names = append(names, retiring...)
	g, err := baseline.GraphFromDeps(names, deps)
	if err != nil {
		return in, fmt.Errorf("baseline %s: %w", cb.Name, err)
	}
	in.graph = g

	reached := map[string]bool{}
	for name, c := range in.components {
		p := policies[name]
		var bindings []client.Object
		if p != nil {
			if bindings, err = r.bindingsOf(ctx, p.Name); err != nil {
				return in, err
			}
		}
		c.objects = bindings
		observeBindings(c, bindings)
		c.keepsData = slices.ContainsFunc(bindings, holdsData)
		for cl := range c.on {
			reached[cl] = true
		}
		if spec := componentOf(active, name); spec != nil {
			c.blocked = r.blockedReason(ctx, spec, p, bindings)
		}
	}

	var clusters clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &clusters); err != nil {
		return in, fmt.Errorf("listing clusters: %w", err)
	}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		in.clusterObjects[c.Name] = c
		if c.DeletionTimestamp == nil && cb.DeletionTimestamp == nil && baseline.Matches(cb, c.Labels) {
			in.matching[c.Name] = true
			reached[c.Name] = true
		}
	}
	for cl := range reached {
		in.clusters = append(in.clusters, cl)
	}
	sort.Strings(in.clusters)
	for _, cs := range cb.Status.Clusters {
		in.previous[cs.Name] = cs
	}
	return in, nil
}

// markGated sets each cluster's gated flag from the new matrix.
func markGated(cb *appsv1alpha1.ClusterBaseline, in input, clusters []appsv1alpha1.BaselineClusterStatus) {
	next := cb.DeepCopy()
	next.Status.Clusters = clusters
	for i := range clusters {
		c := in.clusterObjects[clusters[i].Name]
		clusters[i].Gated = c != nil && baseline.Gates(next, c.Name, c.Labels, c.CreationTimestamp.Time)
	}
}

func componentOf(active []*appsv1alpha1.BaselineComponent, name string) *appsv1alpha1.BaselineComponent {
	for _, c := range active {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// dependentsPresent: a component that depends on name is still on some
// cluster.
func dependentsPresent(in input, name string) bool {
	for _, cl := range in.clusters {
		if len(present(in, in.graph.Dependents(name), cl)) > 0 {
			return true
		}
	}
	return false
}

// holdsData: the binding's template is a kind whose copies hold data.
func holdsData(b client.Object) bool {
	ref := bindingkind.Spec(b).Resource
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && interpreter.HoldsData(gv.WithKind(ref.Kind).GroupKind())
}

// gone: a withdrawn component is nowhere any more.
func gone(c *component) bool {
	for _, o := range c.on {
		if o.present {
			return false
		}
	}
	return true
}

// summarize is the Ready condition from the matrix.
func summarize(cb *appsv1alpha1.ClusterBaseline, in input, clusters []appsv1alpha1.BaselineClusterStatus) (status metav1.ConditionStatus, reason, msg string) {
	matching := 0
	var failed, pending []string
	for _, cs := range clusters {
		if !in.matching[cs.Name] {
			continue
		}
		matching++
		all := true
		for _, c := range cs.Components {
			switch c.State {
			case appsv1alpha1.ComponentReady:
			case appsv1alpha1.ComponentFailed:
				failed = append(failed, fmt.Sprintf("%s on %s: %s", c.Name, cs.Name, c.Message))
				all = false
			default:
				all = false
			}
		}
		if !all {
			pending = append(pending, cs.Name)
		}
	}
	switch {
	case cb.DeletionTimestamp != nil:
		return metav1.ConditionFalse, appsv1alpha1.BaselineReasonInProgress, "withdrawing the components in reverse dependency order"
	case len(failed) > 0:
		return metav1.ConditionFalse, appsv1alpha1.BaselineReasonFailed, text.Truncate(strings.Join(failed, "; "), 2048)
	case matching == 0:
		return metav1.ConditionFalse, appsv1alpha1.BaselineReasonNoClusters, "no cluster matches the clusterSelector"
	case len(pending) > 0:
		return metav1.ConditionFalse, appsv1alpha1.BaselineReasonInProgress, "delivering to " + strings.Join(pending, ", ")
	}
	return metav1.ConditionTrue, appsv1alpha1.BaselineReasonReady, fmt.Sprintf("every component is ready on all %d clusters", matching)
}

// writeStatus writes the matrix and the Ready condition when they differ.
func (r *reconciler) writeStatus(ctx context.Context, cb *appsv1alpha1.ClusterBaseline, clusters []appsv1alpha1.BaselineClusterStatus, status metav1.ConditionStatus, reason, msg string) error {
	next := cb.Status.DeepCopy()
	next.ObservedGeneration = cb.Generation
	next.Clusters = clusters
	next.Components = int32(len(cb.Spec.Components))
	matching, ready := 0, 0
	for _, cs := range clusters {
		if cs.Ready == "" {
			continue // being withdrawn from
		}
		matching++
		if n, total, ok := strings.Cut(cs.Ready, "/"); ok && n == total {
			ready++
		}
	}
	next.ReadyClusters = fmt.Sprintf("%d/%d", ready, matching)
	apimeta.SetStatusCondition(&next.Conditions, metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: msg, ObservedGeneration: cb.Generation})
	if semantic.Equal(&cb.Status, next) {
		return nil
	}
	orig := cb.DeepCopy()
	cb.Status = *next
	if err := r.client.Status().Patch(ctx, cb, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing the status of baseline %s: %w", cb.Name, err)
	}
	return nil
}

// events records each component's transitions on each cluster.
func (r *reconciler) events(cb *appsv1alpha1.ClusterBaseline, clusters []appsv1alpha1.BaselineClusterStatus) {
	prev := map[string]appsv1alpha1.ComponentState{}
	for _, cs := range cb.Status.Clusters {
		for _, c := range cs.Components {
			prev[cs.Name+"/"+c.Name] = c.State
		}
	}
	for _, cs := range clusters {
		for _, c := range cs.Components {
			was, ok := prev[cs.Name+"/"+c.Name]
			if ok && was == c.State {
				continue
			}
			kind := corev1.EventTypeNormal
			if c.State == appsv1alpha1.ComponentFailed {
				kind = corev1.EventTypeWarning
			}
			note := fmt.Sprintf("component %s on cluster %s: %s", c.Name, cs.Name, c.State)
			if c.Message != "" {
				note += ": " + c.Message
			}
			r.recorder.Eventf(cb, nil, kind, "Component"+string(c.State), "Deliver", "%s", text.Truncate(note, 1024))
		}
		if cs.BaselineReadyTime != nil && !slices.ContainsFunc(cb.Status.Clusters, func(p appsv1alpha1.BaselineClusterStatus) bool {
			return p.Name == cs.Name && p.BaselineReadyTime != nil
		}) {
			r.recorder.Eventf(cb, nil, corev1.EventTypeNormal, "BaselineReady", "Deliver", "cluster %s: every gating component is ready", cs.Name)
		}
	}
}
