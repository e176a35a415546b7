package get

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/cli/table"
	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// Resources lists the templates of a resource and, for each, one line per
// cluster it is placed on: the replicas it has there, how many are ready,
// whether atoll applied it and how healthy it is.
func Resources(ctx context.Context, cfg *cmds.Get) error {
	restCfg, err := kubeconfig.Load(cfg.Kubeconfig, "")
	if err != nil {
		return err
	}
	restCfg.Timeout = 30 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(cfg.Resource).WithVersion(""))
	if err != nil {
		return fmt.Errorf("atoll get %s: the control plane does not serve this resource: %w", cfg.Resource, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	ns := cfg.Namespace
	if namespaced && ns == "" && !cfg.AllNamespaces {
		ns = namespaceOf(cfg.Kubeconfig)
	}
	if !namespaced || cfg.AllNamespaces {
		ns = ""
	}

	md, err := metadata.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	var templates []metav1.PartialObjectMetadata
	if cfg.Name != "" {
		one, err := md.Resource(gvr).Namespace(ns).Get(ctx, cfg.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %q not found", gvr.Resource, cfg.Name)
		}
		if err != nil {
			return err
		}
		templates = append(templates, *one)
	} else {
		list, err := md.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		templates = list.Items
	}
	if len(templates) == 0 {
		fmt.Fprintf(out(cfg), "No %s found.\n", gvr.Resource)
		return nil
	}
	sort.Slice(templates, func(i, j int) bool {
		if templates[i].Namespace != templates[j].Namespace {
			return templates[i].Namespace < templates[j].Namespace
		}
		return templates[i].Name < templates[j].Name
	})

	scheme, err := manager.Scheme()
	if err != nil {
		return err
	}
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	headers := []string{"NAME", "POLICY", "CLUSTER", "REPLICAS", "READY", "APPLIED", "HEALTH", "AGE"}
	if namespaced && ns == "" {
		headers = append([]string{"NAMESPACE"}, headers...)
	}
	t := table.New(out(cfg), headers...)
	now := time.Now()
	for i := range templates {
		for _, r := range templateRows(ctx, c, gvk.Kind, namespaced, &templates[i], now) {
			if namespaced && ns == "" {
				r = append([]string{templates[i].Namespace}, r...)
			}
			t.Row(r...)
		}
	}
	return t.Flush()
}

// templateRows are the lines of one template: one per cluster in its
// binding, or one saying it is not propagated.
func templateRows(ctx context.Context, c client.Client, kind string, namespaced bool, m *metav1.PartialObjectMetadata, now time.Time) [][]string {
	age := duration.HumanDuration(now.Sub(m.CreationTimestamp.Time))
	policy := m.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]
	if policy == "" {
		policy = m.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]
	}
	var spec *workv1alpha2.ResourceBindingSpec
	var status *workv1alpha2.ResourceBindingStatus
	key := client.ObjectKey{Namespace: m.Namespace, Name: names.BindingName(kind, m.Name)}
	if namespaced {
		var b workv1alpha2.ResourceBinding
		if err := c.Get(ctx, key, &b); err == nil {
			spec, status = &b.Spec, &b.Status
		}
	} else {
		var b workv1alpha2.ClusterResourceBinding
		if err := c.Get(ctx, client.ObjectKey{Name: key.Name}, &b); err == nil {
			spec, status = &b.Spec, &b.Status
		}
	}
	if spec == nil {
		return [][]string{{m.Name, policy, "(not propagated)", "", "", "", "", age}}
	}
	if len(spec.Clusters) == 0 {
		msg := "(not scheduled)"
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); cond != nil && cond.Status == metav1.ConditionFalse {
			msg = "(unschedulable: " + cond.Reason + ")"
		}
		return [][]string{{m.Name, policy, msg, "", "", "", "", age}}
	}
	items := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, it := range status.AggregatedStatus {
		items[it.ClusterName] = it
	}
	var rows [][]string
	for _, tc := range spec.Clusters {
		it, seen := items[tc.Name]
		replicas, ready, applied, health := "", "", "", ""
		if spec.Replicas > 0 {
			replicas = strconv.Itoa(int(tc.Replicas))
		}
		if seen {
			applied, health = strconv.FormatBool(it.Applied), string(it.Health)
			ready = readyOf(it)
		}
		rows = append(rows, []string{m.Name, policy, tc.Name, replicas, ready, applied, health, age})
	}
	return rows
}

// readyOf reads the ready count a member reported, for kinds that have one.
func readyOf(it workv1alpha2.AggregatedStatusItem) string {
	if it.Status == nil {
		return ""
	}
	var st map[string]any
	if json.Unmarshal(it.Status.Raw, &st) != nil {
		return ""
	}
	for _, f := range []string{"readyReplicas", "numberReady", "ready"} {
		if v, ok := st[f].(float64); ok {
			return strconv.Itoa(int(v))
		}
	}
	if _, ok := st["replicas"]; ok {
		return "0"
	}
	return ""
}

func namespaceOf(path string) string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).Namespace()
	if err != nil || ns == "" {
		return metav1.NamespaceDefault
	}
	return ns
}
