package detector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/controller/queue"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/intern"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// Name of the detector (work queue, logger, readiness check).
const Name = "detector"

// IndexPolicySelectorGVK (indexer.PolicySelectorGroupKind) indexes
// PropagationPolicies and ClusterPropagationPolicies by the group and kind
// of each resource selector, so a template is only compared with the
// policies that name its kind.
const IndexPolicySelectorGVK = indexer.PolicySelectorGroupKind

// selectorKey is the index key of a template.
func selectorKey(apiVersion, kind string) string { return indexer.SelectorKey(apiVersion, kind) }

// claimIndex indexes templates in the detector's informers by the permanent
// id of the policy that claimed them.
const claimIndex = "claim"

// initialSyncTimeout bounds how long start-up waits for template informers
// before the detector starts working (an informer that cannot list keeps
// retrying in the background).
const initialSyncTimeout = 2 * time.Minute

// Queue priorities: events from informers' initial lists wait behind
// everything else (DESIGN.md section 4, "new work before old").
const (
	freshPriority = 0
	lowPriority   = handler.LowPriority
)

var (
	ppGVR  = policyv1alpha1.GroupVersion.WithResource(policyv1alpha1.ResourcePluralPropagationPolicy)
	cppGVR = policyv1alpha1.GroupVersion.WithResource(policyv1alpha1.ResourcePluralClusterPropagationPolicy)
)

// item is a work-queue key: a template (the GVR of a watched resource) or a
// policy (ppGVR, cppGVR) that needs its permanent id.
type item struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

func (it item) isPolicy() bool { return it.GVR == ppGVR || it.GVR == cppGVR }

// key is the item's key in its informer's store.
func (it item) key() string {
	return toolscache.ObjectName{Namespace: it.Namespace, Name: it.Name}.String()
}

// Setup adds the detector to mgr. It runs only on the elected leader, starts
// once mgr's cache has synced and stops with mgr. ctx is used to register
// the field index only.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts.defaults()
	cfg, httpClient := mgr.GetConfig(), mgr.GetHTTPClient()
	if opts.TemplateInformers == nil {
		md, err := metadata.NewForConfigAndClient(cfg, httpClient)
		if err != nil {
			return fmt.Errorf("detector: metadata client: %w", err)
		}
		opts.TemplateInformers = templatemeta.New(md, InformerOptions())
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("detector: dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("detector: discovery client: %w", err)
	}
	d := &Detector{
		opts:      opts,
		log:       mgr.GetLogger().WithName(Name),
		client:    mgr.GetClient(),
		cache:     mgr.GetCache(),
		dynamic:   dyn,
		discovery: disc,
		elected:   mgr.Elected(),
		newID:     uuid.NewString,
		clock:     clock.RealClock{},
		resources: map[schema.GroupVersionResource]*watched{},
		byGK:      map[schema.GroupKind]*watched{},
		created:   newCreatedBindings(),
		recorder:  mgr.GetEventRecorder("atoll-detector"),
	}
	if err := mgr.AddReadyzCheck(Name, d.readyz); err != nil {
		return fmt.Errorf("detector: readiness check: %w", err)
	}
	return mgr.Add(d)
}

// Detector keeps one binding per resource template that a policy claims.
type Detector struct {
	opts      Options
	log       logr.Logger
	client    client.Client
	cache     cache.Cache
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	elected   <-chan struct{}
	newID     func() string
	clock     clock.PassiveClock
	recorder  recorder.EventRecorder

	queue priorityqueue.PriorityQueue[item]
	ready atomic.Bool
	// created are bindings written but not yet in the cache.
	created *createdBindings

	mu        sync.RWMutex
	resources map[schema.GroupVersionResource]*watched
	// byGK finds the watched resource of a group and kind whatever version
	// a selector or binding names (the detector watches the preferred one).
	byGK map[schema.GroupKind]*watched
}

// watched is a resource with its metadata-only informer.
type watched struct {
	resourceInfo
	informer toolscache.SharedIndexInformer
	// handled reports whether the detector's handler has been called for
	// every object of the informer's initial list. A shared informer that
	// another controller started may have listed long before: the handler
	// then gets the whole list as notifications queued ahead of new events.
	handled func() bool
	stop    func() // removes the handler and releases the informer
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: a sharded
// detector runs in every process, on the shards that process holds.
func (d *Detector) NeedLeaderElection() bool { return !d.opts.Shards.Sharded() }

// shardKey is the binding an item is about: a template's own binding, or
// (for a policy, whose permanent id the detector writes) the policy.
func (d *Detector) shardKey(it item) (string, string) {
	if it.isPolicy() {
		return it.Namespace, it.Name
	}
	if w := d.watchedGVR(it.GVR); w != nil {
		return d.shardKeyOf(w, it)
	}
	return it.Namespace, it.Name
}

// enqueueShard queues, when this process gains shard s, the templates and
// policies of s: their events were skipped while another process held it.
func (d *Detector) enqueueShard(ctx context.Context, s int) {
	d.mu.RLock()
	var items []item
	for _, w := range d.resources {
		for _, obj := range w.informer.GetStore().List() {
			m, ok := obj.(metav1.Object)
			if !ok {
				continue
			}
			it := item{GVR: w.GVR, Namespace: m.GetNamespace(), Name: m.GetName()}
			if d.opts.Shards.Of(d.shardKeyOf(w, it)) == s {
				items = append(items, it)
			}
		}
	}
	d.mu.RUnlock()
	var pps policyv1alpha1.PropagationPolicyList
	var cpps policyv1alpha1.ClusterPropagationPolicyList
	if err := d.cache.List(ctx, &pps); err != nil {
		d.log.Error(err, "Listing PropagationPolicies of a gained shard", "shard", s)
	}
	if err := d.cache.List(ctx, &cpps); err != nil {
		d.log.Error(err, "Listing ClusterPropagationPolicies of a gained shard", "shard", s)
	}
	policies := make([]item, 0, len(pps.Items)+len(cpps.Items))
	for _, p := range pps.Items {
		policies = append(policies, item{GVR: ppGVR, Namespace: p.Namespace, Name: p.Name})
	}
	for _, p := range cpps.Items {
		policies = append(policies, item{GVR: cppGVR, Name: p.Name})
	}
	for _, it := range policies {
		if d.opts.Shards.Of(d.shardKey(it)) == s {
			items = append(items, it)
		}
	}
	d.log.Info("Shard gained", "shard", s, "items", len(items))
	d.enqueue(lowPriority, items...)
}

func (d *Detector) shardKeyOf(w *watched, it item) (string, string) {
	return it.Namespace, names.BindingName(w.Kind, it.Name)
}

// Start runs the detector until ctx ends (manager.Runnable).
func (d *Detector) Start(ctx context.Context) error {
	ctx = logr.NewContext(ctx, d.log)
	d.queue = queue.New(Name, workqueue.NewTypedItemExponentialFailureRateLimiter[item](10*time.Millisecond, 2*time.Minute), d.log.WithName("queue"))
	defer d.queue.ShutDown() // after the one below on a normal stop: a second call does nothing
	defer watchedResources.Set(0)
	defer d.ready.Store(false)

	if !d.cache.WaitForCacheSync(ctx) {
		return errors.New("detector: cache did not sync")
	}
	for {
		err := d.rediscover(ctx)
		if err == nil {
			break
		}
		d.log.Error(err, "Discovering resources failed; retrying")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	// One bound over both waits below: a detector whose informers cannot
	// list starts without them after initialSyncTimeout, as it did before it
	// waited for its handlers (the informers keep retrying).
	syncCtx, cancelSync := context.WithTimeout(ctx, initialSyncTimeout)
	defer cancelSync()
	d.waitForTemplates(syncCtx)

	var regs []func()
	var handled []toolscache.InformerSynced
	defer func() {
		for _, remove := range regs {
			remove()
		}
	}()
	handlers := []struct {
		obj client.Object
		h   toolscache.ResourceEventHandler
	}{
		{&policyv1alpha1.PropagationPolicy{}, d.policyHandler()},
		{&policyv1alpha1.ClusterPropagationPolicy{}, d.policyHandler()},
		{&workv1alpha2.ResourceBinding{}, d.bindingHandler()},
		{&workv1alpha2.ClusterResourceBinding{}, d.bindingHandler()},
		{&configv1alpha1.ResourceInterpreterCustomization{}, d.customizationHandler()},
		{&tenancyv1alpha1.Tenant{}, d.tenantHandler()},
	}
	for _, h := range handlers {
		inf, err := d.cache.GetInformer(ctx, h.obj)
		if err != nil {
			return fmt.Errorf("detector: informer for %T: %w", h.obj, err)
		}
		reg, err := inf.AddEventHandler(h.h)
		if err != nil {
			return fmt.Errorf("detector: handler for %T: %w", h.obj, err)
		}
		regs = append(regs, func() { _ = inf.RemoveEventHandler(reg) })
		handled = append(handled, reg.HasSynced)
	}
	// These informers synced with the manager's cache: their initial lists
	// reach the handlers now, and do so before the detector says it is ready.
	if !toolscache.WaitForCacheSync(syncCtx.Done(), handled...) {
		d.log.Info("Policy, binding or tenant informer has not synced; starting without it")
	}
	cancelSync()

	d.opts.Shards.OnGain(func(s int) { d.enqueueShard(ctx, s) })
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Go(func() { d.work(ctx) })
	}
	maxWorkers.Set(float64(d.opts.Workers))
	d.ready.Store(true)
	d.mu.RLock()
	watchedResources.Set(float64(len(d.resources)))
	d.log.Info("Detector started", "resources", len(d.resources), "workers", d.opts.Workers)
	d.mu.RUnlock()

	ticker := time.NewTicker(d.opts.RediscoveryPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			d.queue.ShutDown()
			wg.Wait()
			d.stopInformers()
			return nil
		case <-ticker.C:
			if err := d.rediscover(ctx); err != nil {
				d.log.Error(err, "Discovering resources failed")
			}
		}
	}
}

// readyz is ready once the template informers of a leading detector have
// synced; a standby replica (not elected) has nothing to be ready for. A
// sharded detector runs in every process. Without leader election the
// process leads from the start, even in the moment before the manager
// says so (a restart's first seconds, when its caches are still listing).
func (d *Detector) readyz(*http.Request) error {
	select {
	case <-d.elected:
	default:
		if d.opts.LeaderElection && !d.opts.Shards.Sharded() {
			return nil
		}
	}
	if !d.ready.Load() {
		return errors.New("detector: template informers have not synced")
	}
	return nil
}

// work is one worker: it takes the highest-priority item and reconciles it.
func (d *Detector) work(ctx context.Context) {
	for {
		it, priority, shutdown := d.queue.GetWithPriority()
		if shutdown {
			return
		}
		d.process(ctx, it, priority)
	}
}

func (d *Detector) process(ctx context.Context, it item, priority int) {
	defer d.queue.Done(it)
	leave, ok := d.opts.Shards.Enter(d.shardKey(it))
	if !ok {
		d.queue.Forget(it) // another process's: it handles the item
		return
	}
	defer leave()
	activeWorkers.Inc()
	defer activeWorkers.Dec()
	kind, reconcile := "template", d.reconcileTemplate
	if it.isPolicy() {
		kind, reconcile = "policy", d.reconcilePolicy
	}
	start := time.Now()
	err := reconcile(ctx, it)
	reconcileDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	if errors.Is(err, errCacheBehind) {
		// Not a failure: look again once the cache has caught up.
		reconciles.WithLabelValues(kind, "requeued").Inc()
		d.queue.AddWithOpts(priorityqueue.AddOpts{After: cacheBehindRetry, Priority: &priority}, it)
		return
	}
	if err != nil {
		reconciles.WithLabelValues(kind, "error").Inc()
		level := 1
		if apierrors.IsForbidden(err) {
			level = 0 // an admin must act: say so at the default level
		}
		d.log.V(level).Info("Reconcile failed; retrying", "resource", it.GVR.String(), "namespace", it.Namespace, "name", it.Name, "err", err.Error())
		d.queue.AddWithOpts(priorityqueue.AddOpts{RateLimited: true, Priority: &priority}, it)
		return
	}
	reconciles.WithLabelValues(kind, "success").Inc()
	d.queue.Forget(it)
}

func (d *Detector) enqueue(priority int, items ...item) {
	d.queue.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, items...)
}

// rediscover watches the control plane's current resources: it starts
// informers for new ones and stops those of vanished ones. Resources of
// groups whose discovery failed this time are kept.
func (d *Detector) rediscover(ctx context.Context) error {
	lists, err := d.discovery.ServerPreferredResources()
	var failed map[schema.GroupVersion]error
	if err != nil {
		var groupErr *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &groupErr) {
			return fmt.Errorf("discovering resources: %w", err)
		}
		failed = groupErr.Groups
		d.log.V(1).Info("Discovery of some groups failed; keeping their informers", "err", err.Error())
	}
	want := watchable(lists, d.opts.SkippedResources)

	d.mu.Lock()
	defer d.mu.Unlock()
	keep := map[schema.GroupVersionResource]bool{}
	for _, r := range want {
		keep[r.GVR] = true
		if _, ok := d.resources[r.GVR]; ok {
			continue
		}
		w := d.startInformer(r)
		d.resources[r.GVR] = w
		d.byGK[r.GVK().GroupKind()] = w
		d.log.V(1).Info("Watching resource", "resource", r.GVR.String(), "kind", r.Kind)
	}
	for gvr, w := range d.resources {
		if keep[gvr] {
			continue
		}
		if _, discoveryFailed := failed[gvr.GroupVersion()]; discoveryFailed {
			continue
		}
		w.stop()
		delete(d.resources, gvr)
		if d.byGK[w.GVK().GroupKind()] == w {
			delete(d.byGK, w.GVK().GroupKind())
		}
		d.log.V(1).Info("Stopped watching resource", "resource", gvr.String())
	}
	if d.ready.Load() {
		watchedResources.Set(float64(len(d.resources)))
	}
	return nil
}

func (d *Detector) startInformer(r resourceInfo) *watched {
	inf, release := d.opts.TemplateInformers.Acquire(r.GVR)
	return d.watch(r, inf, release)
}

// watch adds the detector's handler to r's informer; release gives the
// informer back.
func (d *Detector) watch(r resourceInfo, inf toolscache.SharedIndexInformer, release func()) *watched {
	w := &watched{resourceInfo: r, informer: inf, handled: inf.HasSynced}
	reg, err := inf.AddEventHandler(d.templateHandler(w))
	if err != nil { // only a stopped informer refuses, and a held one runs
		d.log.Error(err, "Watching resource failed", "resource", r.GVR.String())
	} else {
		w.handled = reg.HasSynced
	}
	w.stop = func() {
		if reg != nil {
			_ = inf.RemoveEventHandler(reg)
		}
		release()
	}
	return w
}

// InformerOptions are the template informers' transform and indexers.
// Controllers that share the detector's informers (templatemeta) get
// objects shaped by them.
func InformerOptions() templatemeta.Options {
	return templatemeta.Options{Transform: stripMetadata, Indexers: toolscache.Indexers{claimIndex: claimIndexFunc}}
}

func (d *Detector) stopInformers() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for gvr, w := range d.resources {
		w.stop()
		delete(d.resources, gvr)
	}
	clear(d.byGK)
}

// waitForTemplates waits, bounded, until the detector's handlers have seen
// the initial lists of the first discovery's informers: every template is
// queued (behind new events) before the detector says it is ready, and a
// template created after that is not stuck behind another controller's
// list in the handler's notifications (design 0013, decision 29). ctx
// carries the start-up's deadline.
func (d *Detector) waitForTemplates(ctx context.Context) {
	d.mu.RLock()
	all := make([]*watched, 0, len(d.resources))
	for _, w := range d.resources {
		all = append(all, w)
	}
	d.mu.RUnlock()
	for _, w := range all {
		if !toolscache.WaitForCacheSync(ctx.Done(), w.handled) {
			d.log.Info("Template informer has not synced; starting without it", "resource", w.GVR.String())
		}
	}
}

func (d *Detector) watchedGVR(gvr schema.GroupVersionResource) *watched {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.resources[gvr]
}

func (d *Detector) watchedGK(gk schema.GroupKind) *watched {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byGK[gk]
}

// stripMetadata is the template informers' transform: it drops what the
// detector never reads, shares the strings templates repeat (label and
// annotation keys, the claiming policy's name and id, the namespace, the
// kind) through intern.Default, and label and annotation maps that other
// templates have whole (one application's, one policy's claim) through
// intern.DefaultMaps; other label values stay as they are.
func stripMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	m.ManagedFields = nil
	m.OwnerReferences = nil
	m.Finalizers = nil
	// client-go's streaming list (WatchList) transforms an object twice,
	// so the second pass meets maps shared through intern.DefaultMaps that
	// other goroutines read: it must not write to them, not even a delete
	// of a missing key (Go counts that as a write).
	for k := range unpropagatedAnnotations {
		if _, ok := m.Annotations[k]; ok { //nolint:staticcheck // S1033: the guard is the point (see above)
			delete(m.Annotations, k)
		}
	}
	t := intern.Default
	m.APIVersion, m.Kind, m.Namespace = t.String(m.APIVersion), t.String(m.Kind), t.String(m.Namespace)
	m.Labels = intern.DefaultMaps.Map(m.Labels, names.RepeatedValue)
	m.Annotations = intern.DefaultMaps.Map(m.Annotations, names.RepeatedValue)
	return m, nil
}

func claimIndexFunc(obj any) ([]string, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, nil
	}
	var ids []string
	for _, k := range claimLabels {
		if id := m.Labels[k]; id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
