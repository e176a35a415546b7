package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/controller/workers"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// ControllerName names the controller (metrics, logs, events).
const ControllerName = "cluster"

// Options configure the cluster controller. Zero values take the defaults.
type Options struct {
	// StatusPeriod is how often each member is probed and its status
	// collected (default 10s).
	StatusPeriod time.Duration
	// SuccessThreshold is how long a member must stay healthy before Ready
	// turns True (default 30s).
	SuccessThreshold time.Duration
	// FailureThreshold is how long a member must stay unhealthy or
	// unreachable before Ready turns False or Unknown (default 30s).
	FailureThreshold time.Duration
	// ProbeTimeout bounds one /readyz probe (default 5s).
	ProbeTimeout time.Duration
	// NoScheduleOnly taints failed clusters with NoSchedule only, as Karmada
	// v1.14+ does; by default they get NoExecute as well, which failover
	// acts on.
	NoScheduleOnly bool
	// Workers is how many clusters are reconciled at once (default
	// workers.Clusters).
	Workers int
	// Clock is the controller's clock (default the real one).
	Clock clock.Clock
}

func (o *Options) defaults() {
	if o.StatusPeriod <= 0 {
		o.StatusPeriod = 10 * time.Second
	}
	if o.SuccessThreshold <= 0 {
		o.SuccessThreshold = 30 * time.Second
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = 30 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 5 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = workers.Clusters
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// Setup adds the cluster controller to mgr. cc must be shared with the
// other controllers and added to mgr as a Runnable by the caller.
func Setup(_ context.Context, mgr ctrl.Manager, cc *clustercache.Cache, opts Options) error {
	opts.defaults()
	r := &reconciler{
		client:   mgr.GetClient(),
		cc:       cc,
		opts:     opts,
		tracker:  newTracker(),
		recorder: mgr.GetEventRecorder("atoll-cluster-controller"),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Neither status writes nor taint changes (the controller's own) call
		// for a probe; the period does. Connection settings do.
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(specChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers}).
		Complete(r)
}

type reconciler struct {
	client   client.Client
	cc       *clustercache.Cache
	opts     Options
	tracker  *tracker
	recorder recorder.EventRecorder
}

// clustersOfSecret maps a Secret to the Clusters whose spec.secretRef
// names it.
func (r *reconciler) clustersOfSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	var list clusterv1alpha1.ClusterList
	if err := r.client.List(ctx, &list); err != nil {
		klog.FromContext(ctx).Error(err, "Listing clusters for a secret", "secret", klog.KObj(obj))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		ref := list.Items[i].Spec.SecretRef
		if ref != nil && ref.Namespace == obj.GetNamespace() && ref.Name == obj.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
		}
	}
	return reqs
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := klog.FromContext(ctx)
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if cluster.DeletionTimestamp != nil {
		r.forget(req.Name)
		return reconcile.Result{}, nil
	}
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		// An agent in the member reports a pull-mode cluster; atoll has none.
		logger.V(1).Info("Skipping pull-mode cluster")
		return reconcile.Result{}, nil
	}

	observed := probeResult{metav1.ConditionUnknown, ReasonClusterNotReachable, ""}
	member, err := r.cc.Member(ctx, cluster.Name)
	if err != nil {
		observed.message = fmt.Sprintf("cluster is not reachable: %v", err)
	} else {
		observed = probe(ctx, member.Kube.Discovery().RESTClient(), r.opts.ProbeTimeout)
	}
	logger.V(2).Info("Probed cluster", "status", observed.status, "message", observed.message)

	current := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	var currentStatus metav1.ConditionStatus
	if current != nil {
		currentStatus = current.Status
	}
	now := r.opts.Clock.Now()
	ready, wait := r.tracker.decide(cluster.Name, currentStatus, observed.status, now,
		thresholds{success: r.opts.SuccessThreshold, failure: r.opts.FailureThreshold})
	if wait > 0 {
		logger.V(1).Info("Ready state pending its threshold", "current", currentStatus, "observed", observed.status, "remaining", wait)
	}

	status := cluster.Status.DeepCopy()
	if ready != currentStatus {
		meta.SetStatusCondition(&status.Conditions, observed.condition(cluster.Generation))
	}
	if observed.status == metav1.ConditionTrue {
		r.collect(ctx, member, cluster, status)
	}

	// Status first, then the taints that follow it: the informer delivers
	// the two writes in order, so a reconcile never sees taints newer than
	// the condition they were derived from.
	if err := r.syncStatus(ctx, cluster, status, currentStatus, ready); err != nil {
		return r.retry(ctx, err)
	}
	clusterReady.WithLabelValues(cluster.Name).Set(readyValue(ready))
	if err := r.syncTaints(ctx, cluster, ready, now); err != nil {
		return r.retry(ctx, err)
	}

	after := r.opts.StatusPeriod
	if wait > 0 && wait < after {
		after = wait
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// retry returns err for a backed-off retry, except conflicts (a stale
// cache after the controller's own write), which are retried shortly and
// quietly.
func (r *reconciler) retry(ctx context.Context, err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(1).Info("Cluster changed meanwhile, retrying", "err", err)
		return reconcile.Result{RequeueAfter: min(time.Second, r.opts.StatusPeriod)}, nil
	}
	return reconcile.Result{}, err
}

// specChanged passes creations, deletions and updates that change the spec
// other than its taints.
func specChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldC, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		newC, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		if newC.DeletionTimestamp != nil {
			return true
		}
		a, b := oldC.Spec.DeepCopy(), newC.Spec.DeepCopy()
		a.Taints, b.Taints = nil, nil
		return !semantic.Equal(a, b)
	}}
}

func (r *reconciler) forget(name string) {
	r.tracker.forget(name)
	r.cc.Remove(name)
	clusterReady.DeleteLabelValues(name)
}

// collect refreshes status from a healthy member; parts that cannot be
// read keep their previous values.
func (r *reconciler) collect(ctx context.Context, member *clustercache.Member, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) {
	c, err := collect(ctx, member.Kube)
	if err != nil {
		klog.FromContext(ctx).Info("Collecting cluster status failed in part", "err", err)
	}
	if c.version != "" {
		status.KubernetesVersion = c.version
	}
	if c.apis != nil {
		if !semantic.Equal(c.apis, status.APIEnablements) && status.APIEnablements != nil {
			// The member serves other APIs now: forget the mapper's cache.
			if m, ok := member.Mapper.(interface{ Reset() }); ok {
				m.Reset()
			}
		}
		status.APIEnablements = c.apis
		cond := metav1.Condition{
			Type:               clusterv1alpha1.ClusterConditionCompleteAPIEnablements,
			Status:             metav1.ConditionTrue,
			Reason:             ReasonAPIEnablementsComplete,
			Message:            "collected the complete API list of the cluster",
			ObservedGeneration: cluster.Generation,
		}
		if !c.apisComplete {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonAPIEnablementsPartial,
				"collected a partial API list of the cluster: discovery of some groups failed"
		}
		if prev := meta.FindStatusCondition(status.Conditions, cond.Type); prev == nil || prev.Status != cond.Status || prev.Reason != cond.Reason {
			meta.SetStatusCondition(&status.Conditions, cond)
		}
	}
	if c.nodes != nil {
		status.NodeSummary = c.nodes
	}
	if c.resources != nil {
		// Keep what the summary does not compute (allocatableModelings).
		rs := c.resources
		if status.ResourceSummary != nil {
			rs.AllocatableModelings = status.ResourceSummary.AllocatableModelings
		}
		status.ResourceSummary = rs
	}
}

// syncTaints makes the health taints follow Ready; it patches spec.taints
// only when they change and updates cluster in place.
func (r *reconciler) syncTaints(ctx context.Context, cluster *clusterv1alpha1.Cluster, ready metav1.ConditionStatus, now time.Time) error {
	taints, added, removed, changed := desiredTaints(cluster.Spec.Taints, ready, metav1.NewTime(now), !r.opts.NoScheduleOnly)
	if !changed {
		return nil
	}
	orig := cluster.DeepCopy()
	cluster.Spec.Taints = taints
	if err := r.client.Patch(ctx, cluster, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("updating taints of cluster %s: %w", cluster.Name, err)
	}
	klog.FromContext(ctx).V(0).Info("Updated cluster taints", "added", added, "removed", removed)
	note := []string{}
	for _, k := range added {
		note = append(note, "added "+k)
	}
	for _, k := range removed {
		note = append(note, "removed "+k)
	}
	r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, "TaintsChanged", "UpdateTaints", "%s", strings.Join(note, ", "))
	return nil
}

// syncStatus writes status when it differs from the cluster's. Conditions
// are only touched when their status or reason changes, so their
// lastTransitionTime and observedGeneration (the generation they were set
// at) cause no writes.
func (r *reconciler) syncStatus(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus, was, ready metav1.ConditionStatus) error {
	if semantic.Equal(&cluster.Status, status) {
		return nil
	}
	orig := cluster.DeepCopy()
	cluster.Status = *status
	if err := r.client.Status().Patch(ctx, cluster, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("updating status of cluster %s: %w", cluster.Name, err)
	}
	if ready != was {
		cond := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady)
		eventType := corev1.EventTypeWarning
		if ready == metav1.ConditionTrue {
			eventType = corev1.EventTypeNormal
		}
		klog.FromContext(ctx).V(0).Info("Cluster Ready condition changed", "from", was, "to", ready, "reason", cond.Reason, "message", cond.Message)
		r.recorder.Eventf(cluster, nil, eventType, cond.Reason, "UpdateReadyCondition", "Ready %s: %s", ready, cond.Message)
	}
	return nil
}
