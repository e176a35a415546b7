// Package manager assembles atoll's controller-manager: the controllers,
// health endpoints, metrics and leader election. The same code runs in
// process under `atoll up` and standalone as `atoll controller-manager`
// against any Kubernetes API server.
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/atoll-dev/atoll/apis"
	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/controller/baseline"
	"github.com/atoll-dev/atoll/pkg/controller/cluster"
	"github.com/atoll-dev/atoll/pkg/controller/dependencies"
	"github.com/atoll-dev/atoll/pkg/controller/detector"
	"github.com/atoll-dev/atoll/pkg/controller/executor"
	"github.com/atoll-dev/atoll/pkg/controller/failover"
	"github.com/atoll-dev/atoll/pkg/controller/hpamarker"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/controller/rebalance"
	"github.com/atoll-dev/atoll/pkg/controller/replicassyncer"
	"github.com/atoll-dev/atoll/pkg/controller/tenant"
	"github.com/atoll-dev/atoll/pkg/eviction"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/interpreter/script"
	"github.com/atoll-dev/atoll/pkg/scheduler"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/requestmetrics"
	"github.com/atoll-dev/atoll/pkg/util/restmapping"
	utilselection "github.com/atoll-dev/atoll/pkg/util/selection"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
	"github.com/atoll-dev/atoll/pkg/util/templatecache"
)

// Options configure the controller-manager.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics; "0" disables them.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables them.
	HealthProbeBindAddress string
	// PprofBindAddress serves /debug/pprof/; "0" or empty disables it.
	PprofBindAddress string
	// LeaderElect makes only one of several replicas run controllers.
	LeaderElect bool
	// LeaderElectionNamespace holds the leader Lease.
	LeaderElectionNamespace string
	// LeaderElectionID names the leader Lease (and prefixes the shard
	// Leases).
	LeaderElectionID string
	// Shards splits the per-template work (detector, scheduler, executor,
	// failover, dependencies, hpa-marker) between processes, each holding
	// some of the Shards shards through Leases (pkg/shard). 0 or 1: one
	// process does everything. More needs LeaderElect, under which the
	// cluster-wide controllers run in one process.
	Shards int
	// ShardTiming times the shard Leases (zero: shard.DefaultTiming).
	ShardTiming shard.Timing
	// KubeAPIQPS and KubeAPIBurst bound the controllers' requests to the
	// control plane with a client-side token bucket (QPS 0: keep the
	// config's own; negative: no client-side limit). Every controller
	// shares one bucket, so a positive QPS is the ceiling for bulk
	// propagation.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ClusterStatusPeriod, ClusterSuccessThreshold and
	// ClusterFailureThreshold tune member health checking (0: defaults).
	ClusterStatusPeriod     time.Duration
	ClusterSuccessThreshold time.Duration
	ClusterFailureThreshold time.Duration
	// MemberSweepPeriod is the executor's sweep period (0: default 5m).
	MemberSweepPeriod time.Duration
	// BindingStatusWindow is the executor's status coalescing window (0:
	// default 3s).
	BindingStatusWindow time.Duration
	// WithdrawWhenNoFit removes a placed workload from the clusters that
	// no longer match its cluster affinity when none matches (Karmada's
	// behaviour; default false keeps the placement).
	WithdrawWhenNoFit bool
	// EventTypes are the event types recorded (Normal, Warning); nil
	// records both, empty none.
	EventTypes []string
	// Failover configures cluster and application failover (zero values:
	// defaults; see pkg/controller/failover).
	Failover FailoverOptions
	// Rebalance configures gradual moves.
	Rebalance RebalanceOptions
	// Workers bound each controller's concurrent reconciles (zero values:
	// the controllers' defaults).
	Workers WorkerOptions
	// Controllers selects controllers, Kubernetes style: "*" enables all,
	// "name" enables one, "-name" disables one. Empty enables none.
	Controllers []string
}

// WorkerOptions are how many objects each controller reconciles at once;
// 0 keeps the controller's own default (its Options say which).
type WorkerOptions struct {
	// Detector: templates.
	Detector int
	// Executor and ClusterExecutor: ResourceBindings and
	// ClusterResourceBindings synced to members.
	Executor, ClusterExecutor int
	// Scheduler: bindings of each kind.
	Scheduler int
	// Cluster: member clusters.
	Cluster int
	// Dependencies: bindings whose dependencies are propagated.
	Dependencies int
}

// RebalanceOptions configure gradual moves (see pkg/controller/rebalance).
type RebalanceOptions struct {
	// MaxInFlight bounds the replicas all moves add at once (0: unlimited).
	MaxInFlight int32
	// SettleWindow is how long a new target must stay unchanged before a
	// step (0: default).
	SettleWindow time.Duration
}

// FailoverOptions configure taints, evictions and their pacing.
type FailoverOptions struct {
	// NoScheduleOnly taints failed clusters NoSchedule only: failover then
	// acts only on operators' NoExecute taints and failover.application.
	NoScheduleOnly bool
	// PurgeMode is cluster failover's default purge mode.
	PurgeMode policyv1alpha1.PurgeMode
	// EvictionRate (per second; 0 unlimited) and EvictionBurst pace
	// evictions and returns across the fleet.
	EvictionRate  float64
	EvictionBurst int
	// GracePeriod bounds Gracefully tasks without gracePeriodSeconds.
	GracePeriod time.Duration
	// UnhealthyClusterThreshold pauses taint-based evictions above this
	// fraction of not-Ready clusters.
	UnhealthyClusterThreshold float64
}

// Controller is one registered controller: a name and how to add it to a
// manager.
type Controller struct {
	Name string
	// Setup registers the controller; nil for a name that only selects
	// work another controller does.
	Setup func(ctx context.Context, mgr ctrl.Manager) error
}

// registry lists atoll's controllers in start order. Controllers that talk
// to members share one cluster cache.
// Per-template controllers get shards: they work only on the shards this
// process holds (all of them when shards is nil).
func registry(opts Options, cc *clustercache.Cache, interp *interpreter.Interpreter, shards *shard.Owner, templates *templatemeta.Informers) []Controller {
	// One bucket paces failover's evictions and the scheduler's returns.
	limiter := eviction.NewLimiter(opts.Failover.EvictionRate, opts.Failover.EvictionBurst)
	// The detector reads a template once; the executor renders from that.
	full := templatecache.New()
	// Bindings are created with the executor's finalizer when it runs, so
	// that it needs no write to add it.
	var finalizer string
	if Enabled("executor", opts.Controllers) {
		finalizer = workv1alpha2.CleanupFinalizer
	}
	// A new placement's status goes out with the executor's first write
	// when both run here (one binding status write instead of two).
	var handoff *bindingkind.Handoff
	if Enabled("executor", opts.Controllers) && Enabled("scheduler", opts.Controllers) {
		handoff = bindingkind.NewHandoff(0, 0)
	}
	return []Controller{
		{Name: "cluster", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return cluster.Setup(ctx, mgr, cc, cluster.Options{
				StatusPeriod:     opts.ClusterStatusPeriod,
				SuccessThreshold: opts.ClusterSuccessThreshold,
				FailureThreshold: opts.ClusterFailureThreshold,
				NoScheduleOnly:   opts.Failover.NoScheduleOnly,
				Workers:          opts.Workers.Cluster,
			})
		}},
		{Name: "detector", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return detector.Setup(ctx, mgr, detector.Options{Interpreter: interp, Templates: full, TemplateInformers: templates, BindingFinalizer: finalizer, Shards: shards,
				NamespaceAutoProvision: Enabled(NamespaceSync, opts.Controllers), LeaderElection: opts.LeaderElect, Workers: opts.Workers.Detector})
		}},
		// Karmada's namespace sync controller, by its Karmada name so that
		// --controllers=-namespace turns it off as there. The detector does
		// its work (one writer per binding); this entry only selects it.
		{Name: NamespaceSync},
		{Name: "scheduler", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return scheduler.Setup(ctx, mgr, scheduler.Options{Limiter: limiter, GracePeriod: opts.Failover.GracePeriod, Shards: shards,
				WithdrawWhenNoFit: opts.WithdrawWhenNoFit, Handoff: handoff, Workers: opts.Workers.Scheduler})
		}},
		{Name: failover.ControllerName, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return failover.Setup(ctx, mgr, failover.Options{
				Limiter:                   limiter,
				PurgeMode:                 opts.Failover.PurgeMode,
				UnhealthyClusterThreshold: opts.Failover.UnhealthyClusterThreshold,
				Shards:                    shards,
			})
		}},
		{Name: "executor", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return executor.Setup(ctx, mgr, cc, executor.Options{SweepPeriod: opts.MemberSweepPeriod, StatusInterval: opts.BindingStatusWindow,
				Interpreter: interp, Templates: full, Shards: shards, NamespaceAutoProvision: Enabled(NamespaceSync, opts.Controllers),
				Handoff: handoff, Workers: opts.Workers.Executor, ClusterWorkers: opts.Workers.ClusterExecutor})
		}},
		{Name: "dependencies", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return dependencies.Setup(ctx, mgr, dependencies.Options{Interpreter: interp, BindingFinalizer: finalizer, Shards: shards, TemplateInformers: templates,
				Workers: opts.Workers.Dependencies})
		}},
		{Name: "hpa-marker", Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return hpamarker.Setup(ctx, mgr, hpamarker.Options{Shards: shards})
		}},
		{Name: replicassyncer.ControllerName, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return replicassyncer.Setup(ctx, mgr, replicassyncer.Options{Shards: shards})
		}},
		{Name: tenant.ControllerName, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return tenant.Setup(ctx, mgr, tenant.Options{})
		}},
		{Name: baseline.ControllerName, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return baseline.Setup(ctx, mgr, baseline.Options{})
		}},
		{Name: rebalance.ControllerName, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
			return rebalance.Setup(ctx, mgr, cc, rebalance.Options{
				MaxInFlight: opts.Rebalance.MaxInFlight, SettleWindow: opts.Rebalance.SettleWindow})
		}},
	}
}

// NamespaceSync names namespace auto-provision in --controllers.
const NamespaceSync = "namespace"

// ControllerNames lists the registered controllers.
func ControllerNames() []string {
	var names []string
	for _, c := range registry(Options{}, nil, nil, nil, nil) {
		names = append(names, c.Name)
	}
	return names
}

// Enabled reports whether name is selected by the --controllers list.
func Enabled(name string, selection []string) bool {
	return utilselection.Enabled(name, withAliases(selection))
}

// aliases are former controller names, and Karmada's names, that still
// select the controller.
var aliases = map[string]string{"binding": "executor",
	// Karmada's names.
	"deploymentReplicasSyncer": replicassyncer.ControllerName, "hpaScaleTargetMarker": "hpa-marker"}

func withAliases(selection []string) []string {
	out := make([]string, len(selection))
	for i, s := range selection {
		neg, name := "", s
		if len(s) > 0 && s[0] == '-' {
			neg, name = "-", s[1:]
		}
		if to, ok := aliases[name]; ok {
			name = to
		}
		out[i] = neg + name
	}
	return out
}

// DefaultNamespace is where atoll keeps its own objects in the control plane.
const DefaultNamespace = "atoll-system"

// DefaultLeaderElectionID names the Lease the controller-manager leads with.
const DefaultLeaderElectionID = "atoll-controller-manager"

// Scheme knows the built-in kinds and all atoll/Karmada API groups.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apis.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// New builds the manager with every atoll controller registered.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	ctrl.SetLogger(klog.NewKlogr())
	cfg = controlPlaneConfig(cfg, opts)
	scheme, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	if opts.LeaderElectionNamespace == "" {
		opts.LeaderElectionNamespace = DefaultNamespace
	}
	if opts.LeaderElectionID == "" {
		opts.LeaderElectionID = DefaultLeaderElectionID
	}
	if opts.Shards > 1 && !opts.LeaderElect {
		return nil, fmt.Errorf("--shards %d: needs --leader-elect, so that the cluster-wide controllers (cluster, tenant, baseline, rebalance) run in one process only", opts.Shards)
	}
	if opts.LeaderElect {
		if err := ensureNamespace(ctx, cfg, opts.LeaderElectionNamespace); err != nil {
			return nil, err
		}
	}
	var shards *shard.Owner
	var identity string
	if opts.Shards > 1 {
		shards = shard.NewOwner(opts.Shards)
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("shard identity: %w", err)
		}
		if identity, err = shard.Identity(host, uuid.NewString()); err != nil {
			return nil, err
		}
		// The identity in the user agent tells, in the API server's audit
		// log, which process wrote what. The field manager, taken from
		// the agent's first word, stays "atoll".
		cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " replica/" + identity
	}
	// The manager's own requests (informers, leader election, events, the
	// shared cluster cache) count as "manager"; each controller's as its own.
	// They have a bucket of their own: events (several per new template)
	// must not take the rate the controllers' writes need, as a separate
	// clientset per recorder gives kube-controller-manager.
	base := cfg
	own := rest.CopyConfig(cfg)
	if cfg.QPS > 0 {
		own.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, max(cfg.Burst, 1))
	}
	own = requestmetrics.Config(own, "manager")
	// The binding informers' client has a connection of its own.
	bindingsHTTP, err := rest.HTTPClientFor(own)
	if err != nil {
		return nil, fmt.Errorf("binding informers' HTTP client: %w", err)
	}
	// The templates' metadata informers, one per resource: the detector,
	// the dependencies distributor and the manager's cache (metadata-only
	// entries) share them.
	md, err := metadata.NewForConfig(requestmetrics.Config(base, "template-informers"))
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	templates := templatemeta.New(md, detector.InformerOptions())
	byObject := map[client.Object]cache.ByObject{
		&corev1.Secret{}:    {Namespaces: map[string]cache.Config{names.ClusterSecretNamespace: {}}},
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{names.SystemNamespace: {}}},
		// One per template: their repeated strings are shared, and
		// they decode through pkg/util/wire (newInformerFunc, which
		// must learn any selector or namespace given here).
		&workv1alpha2.ResourceBinding{}:        {Transform: bindingTransform},
		&workv1alpha2.ClusterResourceBinding{}: {Transform: bindingTransform},
	}
	restricted := map[schema.GroupKind]bool{}
	for obj, c := range byObject {
		if len(c.Namespaces) > 0 || c.Label != nil || c.Field != nil {
			gvk, err := apiutil.GVKForObject(obj, scheme)
			if err != nil {
				return nil, err
			}
			restricted[gvk.GroupKind()] = true
		}
	}
	var mapper meta.RESTMapper // set by MapperProvider, within NewManager
	newInformer, err := newInformerFunc(own, bindingsHTTP, scheme, templates, &mapper, restricted)
	if err != nil {
		return nil, fmt.Errorf("binding informers' client: %w", err)
	}
	metrics, err := metricsServer(opts.MetricsBindAddress)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(own, ctrl.Options{
		Scheme: scheme,
		MapperProvider: func(c *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
			m, err := apiutil.NewDynamicRESTMapper(c, hc)
			if err != nil {
				return nil, err
			}
			mapper = restmapping.Memoize(m)
			return mapper, nil
		},
		// Only cluster credentials are read from Secrets: caching every
		// Secret of the control plane would cost memory for nothing. Push
		// clusters keep their credentials in karmada-cluster, as in Karmada.
		// The executor's pending withdrawals are ConfigMaps of the system
		// namespace; no other ConfigMap is read through this cache.
		// No controller reads managedFields, and on bindings (written
		// by detector, scheduler and executor) they are much of the object.
		Cache:                         cache.Options{DefaultTransform: cache.TransformStripManagedFields(), NewInformer: newInformer, ByObject: byObject},
		Metrics:                       metricsserver.Options{BindAddress: "0"}, // served by metrics, bound above
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		PprofBindAddress:              opts.PprofBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr(30 * time.Second),
	})
	if err != nil {
		if metrics != nil {
			_ = metrics.Listener.Close()
		}
		return nil, fmt.Errorf("creating controller-manager: %w", err)
	}
	if metrics != nil {
		if err := mgr.Add(metrics); err != nil {
			return nil, err
		}
	}
	// Events go through atoll's own bounded writer (events.Writer), on the
	// manager's config, bucket and HTTP client, rather than client-go's
	// broadcaster, whose memory grows with a burst of new templates.
	eventClient, err := eventsclient.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	eventWriter := events.NewWriter(eventClient, scheme, events.WriterOptions{Types: opts.EventTypes})
	if err := mgr.Add(eventWriter); err != nil {
		return nil, err
	}
	cc := clustercache.New(mgr.GetClient(), clustercache.Options{})
	if err := cc.TrackChanges(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	if err := mgr.Add(cc); err != nil {
		return nil, err
	}
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	// One interpreter, reading customizations from the manager's cache,
	// serves every controller.
	customizations, err := customizationSource(ctx, mgr.GetCache())
	if err != nil {
		return nil, err
	}
	interp := interpreter.New(interpreter.NewCustomizations(customizations, script.DefaultLimits))
	if shards.Sharded() {
		if err := mgr.Add(&shard.Leases{Owner: shards, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
			Namespace: opts.LeaderElectionNamespace, Group: opts.LeaderElectionID, Identity: identity, Timing: opts.ShardTiming}); err != nil {
			return nil, err
		}
	}
	// The controllers share one cache, so a version one of them replaced
	// is stale for all of them.
	versions := stalewrites.New(nil)
	for _, c := range registry(opts, cc, interp, shards, templates) {
		if !Enabled(c.Name, opts.Controllers) || c.Setup == nil {
			continue
		}
		view, err := forController(mgr, base, c.Name, eventWriter, versions)
		if err != nil {
			return nil, err
		}
		if err := c.Setup(ctx, view); err != nil {
			return nil, fmt.Errorf("setting up controller %s: %w", c.Name, err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	// Ready once the informer caches of registered controllers have synced.
	if err := mgr.AddReadyzCheck("informers", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches have not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// controlPlaneConfig is the controllers' copy of cfg, the connection to
// the control plane's API server.
func controlPlaneConfig(cfg *rest.Config, opts Options) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	// As kube-controller-manager and kube-scheduler do: a controller-manager
	// runs beside its API server, where gzip costs both sides more CPU than
	// the bytes it saves. At 100,000 templates the initial watch streams
	// are about half a gigabyte (design 0013, decision 22).
	cfg.DisableCompression = true
	if opts.KubeAPIQPS != 0 {
		// A negative QPS makes client-go build no rate limiter: the API
		// server's priority and fairness bounds the controllers, whose
		// concurrency their workers already bound.
		cfg.QPS = opts.KubeAPIQPS
	}
	if opts.KubeAPIBurst > 0 {
		cfg.Burst = opts.KubeAPIBurst
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// Every controller has a client of its own (forController); one
		// limiter keeps --kube-api-qps the ceiling for all of them (the
		// manager's own traffic has its own, in New).
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, max(cfg.Burst, 1))
	}
	return cfg
}

// ensureNamespace creates ns when it is missing. A caller without the right
// to create namespaces gets on as long as the namespace already exists.
func ensureNamespace(ctx context.Context, cfg *rest.Config, ns string) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("checking namespace %s: %w", ns, err)
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s for leader election: %w", ns, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// customizationSource indexes the manager cache's informer of
// ResourceInterpreterCustomizations for the interpreter's lookups.
func customizationSource(ctx context.Context, c cache.Cache) (*interpreter.IndexSource, error) {
	inf, err := c.GetInformer(ctx, &configv1alpha1.ResourceInterpreterCustomization{})
	if err != nil {
		return nil, fmt.Errorf("ResourceInterpreterCustomization informer: %w", err)
	}
	shared, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("ResourceInterpreterCustomization informer is a %T, not a shared index informer", inf)
	}
	return interpreter.NewIndexSource(shared)
}
