package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// errNamespaceBindingPending: a namespace is auto-provisioned but its
// binding is not placed yet; the object waits rather than creating the
// namespace without an owner, which its binding could then not adopt.
var errNamespaceBindingPending = errors.New("the namespace's own binding is not placed on this cluster yet")

// ensureNamespace creates a namespace in a member the first time something
// is propagated into it. When the namespace's own ClusterResourceBinding
// (auto-provision or a policy's) places it on this cluster, the namespace is
// created as that binding's, so the binding applies it as its own and may
// later withdraw it; otherwise it is created without atoll's marks and
// stays when the objects go.
func (r *reconciler) ensureNamespace(ctx context.Context, member *clustercache.Member, cluster, ns string) error {
	if ns == "" {
		return nil
	}
	key := namespaceKey(member, ns)
	if !r.namespaces.mark(key) {
		return nil
	}
	_, err := member.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		var obj *corev1.Namespace
		if obj, err = r.namespaceToCreate(ctx, cluster, ns); err == nil {
			_, err = member.Kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{FieldManager: names.FieldManager})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		}
	}
	if err != nil {
		r.namespaces.unmark(key)
		return fmt.Errorf("cluster %s: ensuring namespace %s: %w", cluster, ns, err)
	}
	return nil
}

// namespaceToCreate is the member namespace ns as ensureNamespace creates
// it: with the ownership record of the namespace's binding when that
// binding places it on cluster, plain when the namespace has no binding
// (and is not auto-provisioned) or its binding leaves this cluster out.
func (r *reconciler) namespaceToCreate(ctx context.Context, cluster, ns string) (*corev1.Namespace, error) {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	var b workv1alpha2.ClusterResourceBinding
	err := r.client.Get(ctx, types.NamespacedName{Name: names.BindingName("Namespace", ns)}, &b)
	if apierrors.IsNotFound(err) {
		if r.opts.NamespaceAutoProvision && r.autoProvisionedInControlPlane(ctx, ns) {
			return nil, errNamespaceBindingPending
		}
		return obj, nil
	}
	if err != nil {
		return nil, err
	}
	if b.Spec.Resource.Kind != "Namespace" || b.Spec.Resource.Name != ns || b.DeletionTimestamp != nil {
		return obj, nil
	}
	if !slices.ContainsFunc(b.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == cluster }) {
		if len(b.Spec.Clusters) == 0 && b.Annotations[workv1alpha2.ReleasedAnnotation] == "" {
			return nil, errNamespaceBindingPending // not scheduled yet
		}
		return obj, nil
	}
	id := b.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
	if id == "" {
		return nil, errNamespaceBindingPending
	}
	obj.Labels = map[string]string{workv1alpha2.ManagedLabel: "true", workv1alpha2.ClusterResourceBindingPermanentIDLabel: id}
	obj.Annotations = map[string]string{workv1alpha2.ClusterResourceBindingAnnotation: b.Name}
	return obj, nil
}

// autoProvisionedInControlPlane reports whether the control plane's
// namespace ns exists and is auto-provisioned (so its binding is coming).
func (r *reconciler) autoProvisionedInControlPlane(ctx context.Context, ns string) bool {
	var n metav1.PartialObjectMetadata
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.apiReader.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		return false
	}
	return n.DeletionTimestamp == nil && names.NamespaceAutoProvisioned(ns, n.Labels)
}

func namespaceKey(member *clustercache.Member, ns string) string {
	return fmt.Sprintf("%p/%s", member, ns)
}

// namespaceInUse decides the withdrawal of a member Namespace (b is nil for
// a pending withdrawal whose binding is gone), whose deletion would delete
// everything in it. With an object atoll does not own (the member's own
// workloads, a PersistentVolumeClaim a StatefulSet left) it is handed back
// and kept (keep true): atoll never deletes data it did not create. With
// objects other bindings own it waits (errContentsLeft, retried with
// backoff) for their withdrawals. Objects Kubernetes makes in every namespace, and
// dependents (those with an owner reference, which go with their owner),
// do not count.
func (r *reconciler) namespaceInUse(ctx context.Context, b client.Object, member *clustercache.Member, ri dynamic.ResourceInterface,
	ns *unstructured.Unstructured, cluster string) (keep bool, err error) {
	// Every group must answer: one that does not (an aggregated API that
	// is down) may hold objects atoll cannot see, which the namespace's
	// deletion would take with it once the group is back. Until then the
	// withdrawal waits, as the member's own namespace controller would.
	lists, err := member.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		return false, fmt.Errorf("discovering the resources of cluster %s before withdrawing namespace %s: %w: %w",
			cluster, ns.GetName(), errGroupsUnseen, err)
	}
	var atollObject string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			if !slices.Contains(res.Verbs, "list") || countsNothing(gv.Group, res.Name) {
				continue
			}
			items, err := member.Dynamic.Resource(gv.WithResource(res.Name)).Namespace(ns.GetName()).List(ctx, metav1.ListOptions{Limit: 500})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				return false, fmt.Errorf("listing %s in namespace %s of cluster %s before withdrawing it: %w", res.Name, ns.GetName(), cluster, err)
			}
			for i := range items.Items {
				obj := &items.Items[i]
				if len(obj.GetOwnerReferences()) > 0 || madeByKubernetes(gv.Group, res.Name, obj.GetName()) {
					continue
				}
				if _, owned := ownership.Of(obj); owned {
					atollObject = res.Name + " " + obj.GetName()
					continue
				}
				return true, r.keepInstead(ctx, b, ri, ns, cluster, "NamespaceKept", "namespace",
					fmt.Sprintf("it holds objects atoll does not own (%s %s)", res.Name, obj.GetName()))
			}
		}
	}
	if atollObject != "" {
		return false, fmt.Errorf("withdrawing namespace %s from cluster %s: %s and maybe more of atoll's are still in it: %w",
			ns.GetName(), cluster, atollObject, errContentsLeft)
	}
	return false, nil
}

// countsNothing: resources whose objects never keep a namespace: runtime
// records, and what controllers derive from other objects.
func countsNothing(group, resource string) bool {
	switch {
	case group == "" && (resource == "events" || resource == "endpoints"),
		group == "events.k8s.io",
		group == "discovery.k8s.io" && resource == "endpointslices":
		return true
	}
	return false
}

// madeByKubernetes: the objects Kubernetes itself makes in every namespace.
func madeByKubernetes(group, resource, name string) bool {
	return group == "" && (resource == "serviceaccounts" && name == "default" ||
		resource == "configmaps" && name == "kube-root-ca.crt")
}
