package detector

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNamespaceSkipped(t *testing.T) {
	defaults := DefaultSkippedNamespaces()
	cases := map[string]struct {
		skipped []string
		ns      string
		want    bool
	}{
		"kube-system":             {defaults, "kube-system", true},
		"kube-public":             {defaults, "kube-public", true},
		"kube-node-lease":         {defaults, "kube-node-lease", true},
		"karmada-system":          {defaults, "karmada-system", true},
		"karmada-cluster":         {defaults, "karmada-cluster", true},
		"execution namespace":     {defaults, "karmada-es-member1", true},
		"atoll-system":            {defaults, "atoll-system", true},
		"default":                 {defaults, "default", false},
		"user namespace":          {defaults, "shop", false},
		"kube- prefix not listed": {defaults, "kube-shop", false},
		"cluster-scoped":          {defaults, "", false},
		"empty list":              {[]string{}, "kube-system", false},
		"custom prefix":           {[]string{"team-*"}, "team-a", true},
		"custom prefix mismatch":  {[]string{"team-*"}, "teams", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := namespaceSkipped(tc.skipped, tc.ns); got != tc.want {
				t.Errorf("namespaceSkipped(%q) = %v, want %v", tc.ns, got, tc.want)
			}
		})
	}
}

func TestResourceSkipped(t *testing.T) {
	defaults := DefaultSkippedResources()
	cases := map[string]struct {
		gr   schema.GroupResource
		want bool
	}{
		"events":                    {schema.GroupResource{Resource: "events"}, true},
		"events.k8s.io events":      {schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, true},
		"leases":                    {schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, true},
		"endpoints":                 {schema.GroupResource{Resource: "endpoints"}, true},
		"endpointslices":            {schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, true},
		"nodes":                     {schema.GroupResource{Resource: "nodes"}, true},
		"pods are templates":        {schema.GroupResource{Resource: "pods"}, false},
		"replicasets":               {schema.GroupResource{Group: "apps", Resource: "replicasets"}, true},
		"controllerrevisions":       {schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, true},
		"crds are templates":        {schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, false},
		"apiservices":               {schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, true},
		"policies":                  {schema.GroupResource{Group: "policy.karmada.io", Resource: "propagationpolicies"}, true},
		"bindings":                  {schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, true},
		"clusters":                  {schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters"}, true},
		"atoll groups":              {schema.GroupResource{Group: "rebalance.atoll.dev", Resource: "rebalances"}, true},
		"deployments":               {schema.GroupResource{Group: "apps", Resource: "deployments"}, false},
		"configmaps":                {schema.GroupResource{Resource: "configmaps"}, false},
		"secrets":                   {schema.GroupResource{Resource: "secrets"}, false},
		"namespaces":                {schema.GroupResource{Resource: "namespaces"}, false},
		"clusterroles":              {schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false},
		"pod disruption budgets":    {schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, false},
		"suffix needs a dot":        {schema.GroupResource{Group: "notkarmada.io", Resource: "things"}, false},
		"karmada config":            {schema.GroupResource{Group: "config.karmada.io", Resource: "resourceinterpretercustomizations"}, true},
		"a user's karmada.io group": {schema.GroupResource{Group: "example-abc.karmada.io", Resource: "foos"}, false},
		"service exports":           {schema.GroupResource{Group: "multicluster.x-k8s.io", Resource: "serviceexports"}, false},
		"custom resources":          {schema.GroupResource{Group: "example.com", Resource: "widgets"}, false},
		"policy group of k8s kept":  {schema.GroupResource{Group: "policy", Resource: "propagationpolicies"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := resourceSkipped(defaults, tc.gr); got != tc.want {
				t.Errorf("resourceSkipped(%s) = %v, want %v", tc.gr, got, tc.want)
			}
		})
	}
}

func TestWatchable(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all},
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: all},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get", "patch", "update"}},
			{Name: "namespaces", Kind: "Namespace", Verbs: all},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
			{Name: "componentstatuses", Kind: "ComponentStatus", Verbs: metav1.Verbs{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: all},
			{Name: "deployments/scale", Kind: "Scale", Group: "autoscaling", Version: "v1", Namespaced: true, Verbs: metav1.Verbs{"get", "patch", "update"}},
			{Name: "replicasets", Kind: "ReplicaSet", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "metrics.k8s.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "PodMetrics", Namespaced: true, Verbs: metav1.Verbs{"get", "list"}},
		}},
		{GroupVersion: "policy.karmada.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "propagationpolicies", Kind: "PropagationPolicy", Namespaced: true, Verbs: all},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: all},
			{Name: "readonly", Kind: "ReadOnly", Namespaced: true, Verbs: metav1.Verbs{"get", "list", "watch"}},
		}},
		nil,
	}
	got := watchable(lists, DefaultSkippedResources())
	want := []resourceInfo{
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true},
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true},
		{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget", Namespaced: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watchable (-want +got):\n%s", diff)
	}
}

func TestOptionsDefaults(t *testing.T) {
	var o Options
	o.defaults()
	if o.Workers != 32 || o.RediscoveryPeriod != 30*time.Second {
		t.Errorf("defaults: workers %d, rediscovery %s; want 32, 30s", o.Workers, o.RediscoveryPeriod)
	}
	if diff := cmp.Diff(DefaultSkippedNamespaces(), o.SkippedNamespaces); diff != "" {
		t.Errorf("skipped namespaces (-want +got):\n%s", diff)
	}
	custom := Options{SkippedNamespaces: []string{}, SkippedResources: []schema.GroupResource{}, Workers: 1, RediscoveryPeriod: time.Second}
	custom.defaults()
	if len(custom.SkippedNamespaces) != 0 || len(custom.SkippedResources) != 0 || custom.Workers != 1 || custom.RediscoveryPeriod != time.Second {
		t.Errorf("explicit options were replaced by defaults: %+v", custom)
	}
}

func TestFederationCRD(t *testing.T) {
	cases := map[string]bool{
		"propagationpolicies.policy.karmada.io":               true,
		"resourcebindings.work.karmada.io":                    true,
		"tenants.policy.atoll.dev":                            true,
		"rebalances.apps.atoll.dev":                           true,
		"widgets.example.com":                                 false,
		"things.notkarmada.io":                                false,
		"foos.example-abc.karmada.io":                         false,
		"resourceinterpretercustomizations.config.karmada.io": true,
		"certificates.cert-manager.io":                        false,
	}
	for name, want := range cases {
		if got := federationCRD(name); got != want {
			t.Errorf("federationCRD(%s) = %v, want %v", name, got, want)
		}
	}
}
