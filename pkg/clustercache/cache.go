// Package clustercache is the one place that holds connections to member
// clusters: a client config per Cluster (endpoint, credentials, TLS and
// proxy settings from the Cluster and its Secret), clients, a lazy REST
// mapper, and per (cluster, resource) informers that only see the objects
// atoll manages, decoded straight into compact Objects (wire.go). A member is rebuilt when the Cluster's connection
// settings or its Secret change; its informers stop with it.
package clustercache

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/restmapping"
)

// Options bound the clients of every member.
type Options struct {
	// QPS and Burst rate-limit the requests to one member (default 100 and
	// 200).
	QPS   float32
	Burst int
	// Timeout bounds one request to a member (default 10s). Watches are not
	// bounded by it.
	Timeout time.Duration
}

func (o *Options) defaults() {
	if o.QPS <= 0 {
		o.QPS = 100
	}
	if o.Burst <= 0 {
		o.Burst = 200
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
}

// Cache holds the members. Its zero value is not usable; call New.
type Cache struct {
	reader client.Reader
	opts   Options

	// root lives until Start's context ends; every member's informers run
	// under it.
	root     context.Context
	stopRoot context.CancelFunc

	mu      sync.Mutex
	members map[string]*Member
	// tracking is set once TrackChanges has registered its handlers;
	// changes counts the Cluster and Secret changes they have seen.
	tracking atomic.Bool
	changes  atomic.Uint64
}

// New returns a Cache that reads Clusters and their Secrets with c (a
// controller-runtime client; cached reads are fine and recommended, Member
// is called often).
func New(c client.Reader, opts Options) *Cache {
	opts.defaults()
	root, stop := context.WithCancel(context.Background())
	return &Cache{reader: c, opts: opts, root: root, stopRoot: stop, members: map[string]*Member{}}
}

// Start implements manager.Runnable: it holds the cache open until ctx ends,
// then stops every member's informers.
func (c *Cache) Start(ctx context.Context) error {
	<-ctx.Done()
	c.stopRoot()
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, m := range c.members {
		m.stop()
		delete(c.members, name)
	}
	return nil
}

// Member returns the connection to cluster, building it on first use and
// rebuilding it (stopping the old informers) when the Cluster's
// apiEndpoint, secretRef, insecureSkipTLSVerification or proxyURL, or the
// Secret's resourceVersion changed. A Cluster that no longer exists is
// removed and reported as NotFound.
func (c *Cache) Member(ctx context.Context, cluster string) (*Member, error) {
	// Read before the Cluster and Secret are: a change after this point
	// makes the next call read them again.
	seen := c.changes.Load()
	if c.tracking.Load() {
		c.mu.Lock()
		m, ok := c.members[cluster]
		c.mu.Unlock()
		if ok && m.checked.Load() == seen {
			return m, nil
		}
	}
	// Member is called for every binding and cluster; deep copies of the
	// Cluster (its status lists every API the member serves) and its
	// Secret were 3 % of a restart's CPU. Both are only read here, and a
	// cache replaces, never changes, the objects it hands out.
	obj := &clusterv1alpha1.Cluster{}
	if err := c.reader.Get(ctx, types.NamespacedName{Name: cluster}, obj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			c.Remove(cluster)
		}
		return nil, fmt.Errorf("getting cluster %s: %w", cluster, err)
	}
	var secret *corev1.Secret
	if ref := obj.Spec.SecretRef; ref != nil {
		secret = &corev1.Secret{}
		err := c.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, secret, client.UnsafeDisableDeepCopy)
		if apierrors.IsNotFound(err) {
			secret = nil
		} else if err != nil {
			return nil, fmt.Errorf("cluster %s: getting secret %s/%s: %w", cluster, ref.Namespace, ref.Name, err)
		}
	}
	key := fingerprint(obj, secret)

	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[cluster]; ok {
		if m.fingerprint == key {
			m.checked.Store(seen)
			return m, nil
		}
		klog.FromContext(ctx).V(1).Info("Rebuilding member connection", "cluster", cluster)
		m.stop()
		delete(c.members, cluster)
	}
	cfg, err := ConfigFor(obj, secret)
	if err != nil {
		return nil, err
	}
	m, err := c.newMember(cluster, key, cfg)
	if err != nil {
		return nil, err
	}
	m.checked.Store(seen)
	c.members[cluster] = m
	return m, nil
}

// TrackChanges lets Member skip reading the Cluster and its Secret while
// none of either kind has changed since it last read them. informers must
// be the cache Member reads them from; handlers on its Cluster and Secret
// informers count every change. Member is called for every binding and cluster
// (200,000 times in a 100,000-template restart), and the Secret's read
// through the namespace-restricted cache was a tenth of the executor's
// CPU there. A change is seen as soon as the informer has delivered it,
// so a rotated credential or a moved endpoint is used from the next call
// on, as before, give or take the handlers' delivery.
func (c *Cache) TrackChanges(ctx context.Context, informers Informers) error {
	for _, obj := range []client.Object{&clusterv1alpha1.Cluster{}, &corev1.Secret{}} {
		inf, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T for member connections: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.Changed() },
			UpdateFunc: func(_, _ any) { c.Changed() },
			DeleteFunc: func(any) { c.Changed() },
		}); err != nil {
			return fmt.Errorf("watching %T for member connections: %w", obj, err)
		}
	}
	c.tracking.Store(true)
	return nil
}

// Informers is what TrackChanges needs of a controller-runtime cache.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error)
}

// Changed makes the next Member call of every cluster read its Cluster and
// Secret again.
func (c *Cache) Changed() { c.changes.Add(1) }

// Remove forgets cluster and stops its informers.
func (c *Cache) Remove(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[cluster]; ok {
		m.stop()
		delete(c.members, cluster)
	}
}

// fingerprint is what a member connection depends on.
func fingerprint(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) string {
	var b strings.Builder
	s := &cluster.Spec
	fmt.Fprintf(&b, "%s|%t|%s|", s.APIEndpoint, s.InsecureSkipTLSVerification, s.ProxyURL)
	if s.SecretRef != nil {
		fmt.Fprintf(&b, "%s/%s", s.SecretRef.Namespace, s.SecretRef.Name)
	}
	if secret != nil {
		fmt.Fprintf(&b, "|%s|%s", secret.UID, secret.ResourceVersion)
	}
	return b.String()
}

func (c *Cache) newMember(name, key string, cfg *rest.Config) (*Member, error) {
	cfg.QPS, cfg.Burst, cfg.Timeout = c.opts.QPS, c.opts.Burst, c.opts.Timeout
	cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " atoll/" + name
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: building client: %w", name, err)
	}
	rc, err := ownership.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: building dynamic client: %w", name, err)
	}
	// Informers watch for minutes; a per-request timeout would cut every
	// watch. Their list and watch calls are bounded by the server's watch
	// timeout and by HTTP/2 health checks instead.
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	wire, err := NewWireClient(watchCfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: building watch client: %w", name, err)
	}
	ctx, cancel := context.WithCancel(c.root)
	return &Member{
		Name:        name,
		Config:      cfg,
		Dynamic:     dynamic.New(rc),
		REST:        rc,
		Kube:        kube,
		Mapper:      restmapping.Memoize(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))),
		fingerprint: key,
		watchClient: wire,
		ctx:         ctx,
		cancel:      cancel,
		informers:   map[schema.GroupVersionResource]*watched{},
	}, nil
}

// Member is the connection to one member cluster. It stays valid until the
// member is rebuilt or removed; callers that keep state per member (such
// as registered handlers) key it on the *Member.
type Member struct {
	Name string
	// Config is the member's client config (with the per-request timeout).
	Config  *rest.Config
	Dynamic dynamic.Interface
	// REST is the client Dynamic is built on, for ownership.Create (which
	// needs a response's status code).
	REST rest.Interface
	Kube kubernetes.Interface
	// Mapper maps kinds to resources with discovery, lazily and cached; it
	// re-discovers when a kind is not found.
	Mapper meta.RESTMapper

	fingerprint string
	// checked is the Cache's change count when the fingerprint was last
	// found current.
	checked atomic.Uint64
	// watchClient lists and watches for the informers; it decodes into
	// *Object (wire.go).
	watchClient rest.Interface
	ctx         context.Context
	cancel      context.CancelFunc

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]*watched
}

type watched struct {
	informer cache.SharedIndexInformer
	lister   cache.GenericLister
	started  time.Time
}

// Watch starts, once per resource, an informer on the member's objects of
// gvr that carry karmada.io/managed=true, kept as *Object (managedFields
// stripped; decode with Live), and adds handler (if not nil) to it. Every
// call with a handler adds it again: register each handler once per
// *Member. The informer stops when the
// member is rebuilt or removed, or when the Cache stops.
func (m *Member) Watch(gvr schema.GroupVersionResource, handler cache.ResourceEventHandler) (cache.GenericLister, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ctx.Err(); err != nil {
		return nil, fmt.Errorf("cluster %s: member connection is closed", m.Name)
	}
	w, ok := m.informers[gvr]
	if !ok {
		inf := cache.NewSharedIndexInformerWithOptions(m.listWatch(gvr), &Object{}, cache.SharedIndexInformerOptions{
			Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			ObjectDescription: gvr.String(),
		})
		logger := klog.Background().WithValues("cluster", m.Name, "resource", gvr.String())
		_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			// The reflector backs off on its own; this only keeps the log
			// readable while a member is down.
			logger.V(2).Info("Member watch failed", "err", err)
		})
		// A generic lister: it hands out the *Object the cache keeps.
		w = &watched{informer: inf, lister: cache.NewGenericLister(inf.GetIndexer(), gvr.GroupResource()), started: time.Now()}
		m.informers[gvr] = w
		go inf.RunWithContext(m.ctx)
	}
	if handler != nil {
		if _, err := w.informer.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("cluster %s: adding handler for %s: %w", m.Name, gvr, err)
		}
	}
	return w.lister, nil
}

// listWatch lists and watches the member's objects of gvr that carry
// karmada.io/managed=true, in every namespace, as *Object.
func (m *Member) listWatch(gvr schema.GroupVersionResource) *cache.ListWatch {
	selector := labels.SelectorFromSet(labels.Set{workv1alpha2.ManagedLabel: "true"}).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = selector
			// The kind from discovery, for custom resources whose listKind
			// is not kind + "List"; when discovery fails, the list's.
			kind := ""
			if gvk, err := m.Mapper.KindFor(gvr); err == nil {
				kind = gvk.Kind
			}
			return ListObjects(ctx, m.watchClient, gvr, kind, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector, opts.Watch = selector, true
			return m.watchClient.Get().AbsPath(resourcePath(gvr)...).
				SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.Unversioned).Watch(ctx)
		},
	}
}

// HasSynced reports whether the informer on gvr has listed the member's
// managed objects once. False when gvr is not watched.
func (m *Member) HasSynced(gvr schema.GroupVersionResource) bool {
	w, ok := m.informerOn(gvr)
	return ok && w.informer.HasSynced()
}

// informerOn is the informer on gvr, if one was started.
func (m *Member) informerOn(gvr schema.GroupVersionResource) (*watched, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.informers[gvr]
	return w, ok
}

// SyncedLister returns the lister of the informer on gvr once it has
// listed the member's managed objects; nil when gvr is not watched or the
// first list is not in. Unlike Watch it never starts an informer.
func (m *Member) SyncedLister(gvr schema.GroupVersionResource) cache.GenericLister {
	w, ok := m.informerOn(gvr)
	if !ok || !w.informer.HasSynced() {
		return nil
	}
	return w.lister
}

// Listing reports whether the informer on gvr is still making its first
// list and was started less than grace ago. Its lister does not know yet
// what the member holds: a caller should come back rather than conclude
// that objects are missing. A member with tens of thousands of objects
// takes many seconds to list on a busy control plane; past grace, a list
// that has not finished is the member's problem, and reported as one.
func (m *Member) Listing(gvr schema.GroupVersionResource, grace time.Duration) bool {
	w, ok := m.informerOn(gvr)
	return ok && !w.informer.HasSynced() && time.Since(w.started) < grace
}

// Closed reports whether the member was rebuilt or removed; a caller
// holding it should ask the Cache again.
func (m *Member) Closed() bool { return m.ctx.Err() != nil }

func (m *Member) stop() {
	m.cancel()
	m.mu.Lock()
	m.informers = map[schema.GroupVersionResource]*watched{}
	m.mu.Unlock()
}
