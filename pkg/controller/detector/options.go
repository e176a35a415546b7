package detector

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/atoll-dev/atoll/pkg/controller/workers"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/templatecache"
)

// Options configure the detector. Zero values mean the defaults.
type Options struct {
	// SkippedNamespaces are namespaces whose templates are never propagated
	// (nor Namespace objects of these names). An entry ending in "*" is a
	// prefix. nil means DefaultSkippedNamespaces; an empty, non-nil list
	// skips none.
	SkippedNamespaces []string
	// SkippedResources are resources the detector does not watch. Resource
	// "*" skips the whole group; a group starting with "*." skips every group
	// with that suffix. nil means DefaultSkippedResources; an empty, non-nil
	// list skips none (resources still need the verbs list, watch, create and
	// get).
	SkippedResources []schema.GroupResource
	// RediscoveryPeriod is how often the control plane's resources are
	// discovered again, to watch new CRDs. Default 30s.
	RediscoveryPeriod time.Duration
	// Workers bounds concurrent reconciles. Default workers.Templates: a
	// reconcile mostly waits on the API server (claim, read, binding), so a
	// burst needs many in flight.
	Workers int
	// Interpreter reads replicas from templates. Default
	// interpreter.Native.
	Interpreter *interpreter.Interpreter
	// Templates receives the templates the detector reads in full, for
	// the executor (nil: not shared).
	Templates *templatecache.Cache
	// TemplateInformers are the metadata informers the detector watches
	// templates with, shared with other controllers (nil: its own). They
	// must be made with InformerOptions.
	TemplateInformers *templatemeta.Informers
	// BindingFinalizer is set on new bindings ("": none): the executor's,
	// when it runs, so that it need not add it with a write of its own.
	BindingFinalizer string
	// NamespaceAutoProvision places every namespace no policy claims on
	// every cluster (Karmada's namespace sync; namespaces.go).
	NamespaceAutoProvision bool
	// Shards limits the detector to the templates and policies of the
	// shards this process holds (nil: all of them, on the elected leader).
	Shards *shard.Owner
	// LeaderElection says the process may be a standby replica waiting
	// for the leader Lease. Without it the process leads from the start,
	// so it is ready only once its template informers have synced.
	LeaderElection bool
}

// DefaultSkippedNamespaces are the namespaces skipped by default: the
// Kubernetes system namespaces and Karmada's and atoll's reserved ones.
func DefaultSkippedNamespaces() []string { return names.ReservedNamespaces() }

// DefaultSkippedResources are the resources skipped by default: runtime and
// cluster-local objects that have no meaning in another cluster, and the
// federation's own APIs.
func DefaultSkippedResources() []schema.GroupResource {
	out := []schema.GroupResource{
		// Runtime records, churning and cluster-local.
		{Group: "", Resource: "events"},
		{Group: "events.k8s.io", Resource: "*"},
		{Group: "coordination.k8s.io", Resource: "*"}, // leases, lease candidates
		{Group: "", Resource: "endpoints"},
		{Group: "discovery.k8s.io", Resource: "endpointslices"},
		{Group: "", Resource: "componentstatuses"},
		// Owned by member-cluster controllers, not by users.
		// Pods are templates (Karmada propagates them); the control plane
		// has no scheduler or kubelet, so they only run in members.
		{Group: "", Resource: "nodes"},
		{Group: "apps", Resource: "replicasets"},
		{Group: "apps", Resource: "controllerrevisions"},
		{Group: "storage.k8s.io", Resource: "csinodes"},
		{Group: "storage.k8s.io", Resource: "volumeattachments"},
		{Group: "resource.k8s.io", Resource: "resourceslices"},
		{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
		// API machinery of the control plane itself. CustomResourceDefinitions
		// are templates like any other (a CRD reaches members, then its
		// custom resources), except the federation's own (skipped).
		{Group: "apiregistration.k8s.io", Resource: "*"},
		{Group: "authentication.k8s.io", Resource: "*"},
		{Group: "authorization.k8s.io", Resource: "*"},
		{Group: "flowcontrol.apiserver.k8s.io", Resource: "*"},
		{Group: "internal.apiserver.k8s.io", Resource: "*"},
	}
	return append(out, federationAPIs()...)
}

// federationAPIs are the federation's own API groups, never templates:
// Karmada's components' groups by name, as Karmada skips them (those atoll
// serves and those it does not; other *.karmada.io groups are users' CRDs,
// which Karmada's own e2e suite uses), and all of atoll's.
func federationAPIs() []schema.GroupResource {
	out := []schema.GroupResource{{Group: "atoll.dev", Resource: "*"}, {Group: "*.atoll.dev", Resource: "*"}}
	for _, g := range []string{
		"cluster.karmada.io", "policy.karmada.io", "work.karmada.io", "config.karmada.io",
		"networking.karmada.io", "autoscaling.karmada.io", "remedy.karmada.io", "apps.karmada.io",
		"search.karmada.io",
	} {
		out = append(out, schema.GroupResource{Group: g, Resource: "*"})
	}
	return out
}

func (o *Options) defaults() {
	if o.Interpreter == nil {
		o.Interpreter = interpreter.Native
	}
	if o.SkippedNamespaces == nil {
		o.SkippedNamespaces = DefaultSkippedNamespaces()
	}
	if o.SkippedResources == nil {
		o.SkippedResources = DefaultSkippedResources()
	}
	if o.RediscoveryPeriod <= 0 {
		o.RediscoveryPeriod = 30 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = workers.Templates
	}
}

// federationCRD reports whether the CustomResourceDefinition named name
// (<plural>.<group>) defines one of the federation's own APIs.
func federationCRD(name string) bool {
	_, group, _ := strings.Cut(name, ".")
	return resourceSkipped(federationAPIs(), schema.GroupResource{Group: group, Resource: "customresourcedefinitions"})
}

// namespaceSkipped reports whether templates of namespace ns are skipped.
func namespaceSkipped(skipped []string, ns string) bool { return names.NamespaceListed(skipped, ns) }

// resourceSkipped reports whether gr is on the skip list.
func resourceSkipped(skipped []schema.GroupResource, gr schema.GroupResource) bool {
	for _, s := range skipped {
		groupMatches := s.Group == gr.Group
		if suffix, ok := strings.CutPrefix(s.Group, "*."); ok {
			groupMatches = strings.HasSuffix(gr.Group, "."+suffix)
		}
		if groupMatches && (s.Resource == "*" || s.Resource == gr.Resource) {
			return true
		}
	}
	return false
}

// resourceInfo is one resource the detector watches.
type resourceInfo struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// GVK of the resource's objects.
func (r resourceInfo) GVK() schema.GroupVersionKind { return r.GVR.GroupVersion().WithKind(r.Kind) }

// requiredVerbs are what templates must support: the detector lists and
// watches them, the executor gets them, and a resource that cannot be
// created is not a template anyone writes.
var requiredVerbs = []string{"list", "watch", "create", "get"}

// watchable picks, from discovery's preferred resources, those the detector
// watches: top-level resources (no subresources) with every required verb
// that are not skipped.
func watchable(lists []*metav1.APIResourceList, skipped []schema.GroupResource) []resourceInfo {
	var out []resourceInfo
	seen := map[schema.GroupVersionResource]bool{}
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, requiredVerbs) {
				continue
			}
			// Discovery may report a resource in another group/version.
			rgv := gv
			if r.Group != "" {
				rgv.Group = r.Group
			}
			if r.Version != "" {
				rgv.Version = r.Version
			}
			gvr := rgv.WithResource(r.Name)
			if seen[gvr] || resourceSkipped(skipped, gvr.GroupResource()) {
				continue
			}
			seen[gvr] = true
			out = append(out, resourceInfo{GVR: gvr, Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	slices.SortFunc(out, func(a, b resourceInfo) int { return strings.Compare(a.GVR.String(), b.GVR.String()) })
	return out
}

func hasVerbs(have metav1.Verbs, want []string) bool {
	for _, v := range want {
		if !slices.Contains(have, v) {
			return false
		}
	}
	return true
}
