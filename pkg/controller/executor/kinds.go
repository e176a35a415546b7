package executor

import (
	"context"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

type metaRESTMapper = meta.RESTMapper

type namespacedKind struct{}

func (namespacedKind) name() string             { return "resourcebinding" }
func (namespacedKind) newObject() client.Object { return &workv1alpha2.ResourceBinding{} }
func (namespacedKind) parts(o client.Object) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	b := o.(*workv1alpha2.ResourceBinding)
	return &b.Spec, &b.Status
}
func (namespacedKind) owns(a map[string]string) (types.NamespacedName, bool) {
	ns, name := a[names.ResourceBindingNamespaceAnnotation], a[names.ResourceBindingNameAnnotation]
	return types.NamespacedName{Namespace: ns, Name: name}, name != ""
}

func (namespacedKind) list(ctx context.Context, c client.Client, ns string) ([]bindingRef, error) {
	var l workv1alpha2.ResourceBindingList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make([]bindingRef, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, refOf(&l.Items[i], &l.Items[i].Spec, &l.Items[i].Status))
	}
	return out, nil
}

type clusterKind struct{}

func (clusterKind) name() string             { return "clusterresourcebinding" }
func (clusterKind) newObject() client.Object { return &workv1alpha2.ClusterResourceBinding{} }
func (clusterKind) parts(o client.Object) (*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {
	b := o.(*workv1alpha2.ClusterResourceBinding)
	return &b.Spec, &b.Status
}
func (clusterKind) owns(a map[string]string) (types.NamespacedName, bool) {
	name := a[names.ClusterResourceBindingAnnotation]
	return types.NamespacedName{Name: name}, name != ""
}

func (clusterKind) list(ctx context.Context, c client.Client, ns string) ([]bindingRef, error) {
	if ns != "" {
		return nil, nil // an OverridePolicy never applies to cluster-scoped resources
	}
	var l workv1alpha2.ClusterResourceBindingList
	if err := c.List(ctx, &l); err != nil {
		return nil, err
	}
	out := make([]bindingRef, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, refOf(&l.Items[i], &l.Items[i].Spec, &l.Items[i].Status))
	}
	return out, nil
}

// ownerMetadata is what the executor puts on every member object so that
// member events map back to the binding and member informers select it.
func ownerMetadata(kind bindingKind, b client.Object) (labels, annotations map[string]string) {
	labels = map[string]string{names.ManagedLabel: "true"}
	annotations = map[string]string{}
	switch kind.(type) {
	case namespacedKind:
		annotations[names.ResourceBindingNamespaceAnnotation] = b.GetNamespace()
		annotations[names.ResourceBindingNameAnnotation] = b.GetName()
		if id := b.GetLabels()[names.ResourceBindingPermanentIDLabel]; id != "" {
			labels[names.ResourceBindingPermanentIDLabel] = id
		}
	case clusterKind:
		annotations[names.ClusterResourceBindingAnnotation] = b.GetName()
		if id := b.GetLabels()[names.ClusterResourceBindingPermanentIDLabel]; id != "" {
			labels[names.ClusterResourceBindingPermanentIDLabel] = id
		}
	}
	return labels, annotations
}

// templateCache keeps each binding's last template as JSON bytes (decoded
// on use), keyed by the template resourceVersion the binding records, so
// member status churn does not turn into control-plane reads.
type templateCache struct {
	mu    sync.Mutex
	items map[types.NamespacedName]cachedTemplate
}

type cachedTemplate struct {
	resourceVersion string
	json            []byte
}

func newTemplateCache() *templateCache {
	return &templateCache{items: map[types.NamespacedName]cachedTemplate{}}
}

func (c *templateCache) get(key types.NamespacedName, rv string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	item, ok := c.items[key]
	c.mu.Unlock()
	if !ok || rv == "" || item.resourceVersion != rv {
		return nil, false
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(item.json); err != nil {
		return nil, false
	}
	return u, true
}

// put stores u under the template resourceVersion the binding records (which
// may be older than u's own after a status write).
func (c *templateCache) put(key types.NamespacedName, rv string, u *unstructured.Unstructured) {
	data, err := u.MarshalJSON()
	if err != nil {
		return
	}
	c.mu.Lock()
	c.items[key] = cachedTemplate{resourceVersion: rv, json: data}
	c.mu.Unlock()
}

func (c *templateCache) forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.items, key)
	c.mu.Unlock()
}

// memberState remembers, per member, which GVRs are watched and which
// namespaces are known to exist, so neither costs a request twice.
type memberState struct {
	mu         sync.Mutex
	watched    map[string]bool // cluster/gvr
	namespaces map[string]bool // cluster/namespace
	lastStatus map[types.NamespacedName]int64
	// applied is, per binding, the clusters an object was applied to or seen
	// in since the process started.
	applied map[types.NamespacedName]map[string]bool
}

func newMemberState() *memberState {
	return &memberState{watched: map[string]bool{}, namespaces: map[string]bool{}, lastStatus: map[types.NamespacedName]int64{},
		applied: map[types.NamespacedName]map[string]bool{}}
}

func (m *memberState) remember(key types.NamespacedName, cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied[key] == nil {
		m.applied[key] = map[string]bool{}
	}
	m.applied[key][cluster] = true
}

// drop forgets a binding that is gone.
func (m *memberState) drop(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.applied, key)
	delete(m.lastStatus, key)
}

func (m *memberState) forget(key types.NamespacedName, cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.applied[key], cluster)
}

// reached lists the clusters a binding's object may be in: those its status
// lists and those remembered since start, sorted.
func (m *memberState) reached(key types.NamespacedName, status *workv1alpha2.ResourceBindingStatus) []string {
	m.mu.Lock()
	set := map[string]bool{}
	for c := range m.applied[key] {
		set[c] = true
	}
	m.mu.Unlock()
	for _, item := range status.AggregatedStatus {
		set[item.ClusterName] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func (m *memberState) mark(set map[string]bool, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if set[key] {
		return false
	}
	set[key] = true
	return true
}

func (m *memberState) unmark(set map[string]bool, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(set, key)
}
