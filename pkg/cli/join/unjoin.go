package join

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// Unjoin removes cfg.Name: the Cluster (so no controller places anything
// there any more), then in the member the objects atoll manages (except
// those to preserve) and join's ServiceAccount, Secret and binding, last
// the stored credentials. Nothing changes when the member cannot be
// reached, unless cfg.SkipMember.
func Unjoin(ctx context.Context, cfg *cmds.Unjoin) error {
	w := out(cfg.Out)
	if err := cmds.ValidateClusterName(cfg.Name); err != nil {
		return err
	}
	cp, err := newControlPlane(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	cluster, err := cp.getCluster(ctx, cfg.Name)
	if err != nil {
		return err
	}
	secretNS, secretName := names.ClusterSecretNamespace, names.ClusterSecretName(cfg.Name)
	if cluster != nil && cluster.Spec.SecretRef != nil {
		secretNS, secretName = cluster.Spec.SecretRef.Namespace, cluster.Spec.SecretRef.Name
	}
	secret, err := cp.kube.CoreV1().Secrets(secretNS).Get(ctx, secretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		secret, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("control plane: getting secret %s/%s: %w", secretNS, secretName, err)
	}
	if cluster == nil && secret == nil && cfg.ClusterKubeconfig == "" {
		return fmt.Errorf("cluster %s is not joined: no Cluster and no Secret %s/%s in the control plane", cfg.Name, secretNS, secretName)
	}

	var member *memberClients
	if !cfg.SkipMember {
		memberCfg, err := unjoinMemberConfig(cfg, cluster, secret)
		if err != nil {
			return err
		}
		if member, err = newMemberClients(ctx, cfg.Name, memberCfg); err != nil {
			return fmt.Errorf("%w (pass --skip-member to remove the cluster from the control plane only)", err)
		}
	}

	if cluster != nil {
		err := cp.dyn.Resource(clusterGVR).Delete(ctx, cfg.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("control plane: deleting cluster %s: %w", cfg.Name, err)
		}
		fmt.Fprintf(w, "control plane: Cluster %s deleted\n", cfg.Name)
	}
	if member != nil {
		if err := member.cleanUp(ctx, w, cp); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "cluster %s: left untouched (--skip-member)\n", cfg.Name)
	}
	if secret != nil {
		err := cp.kube.CoreV1().Secrets(secretNS).Delete(ctx, secretName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("control plane: deleting secret %s/%s: %w", secretNS, secretName, err)
		}
		fmt.Fprintf(w, "control plane: Secret %s/%s deleted\n", secretNS, secretName)
	}
	return nil
}

// unjoinMemberConfig reaches the member with --cluster-kubeconfig, or with
// the credentials the control plane stored at join.
func unjoinMemberConfig(cfg *cmds.Unjoin, cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cfg.ClusterKubeconfig != "" {
		return loadMember(cfg.Name, cfg.ClusterKubeconfig, cfg.ClusterContext)
	}
	if cluster == nil {
		return nil, fmt.Errorf("cluster %s: no Cluster in the control plane to reach the member with; pass --cluster-kubeconfig to clean up the member, or --skip-member", cfg.Name)
	}
	c, err := clustercache.ConfigFor(cluster, secret)
	if err != nil {
		return nil, fmt.Errorf("%w; pass --cluster-kubeconfig to reach the member, or --skip-member", err)
	}
	return c, nil
}

// memberClients reach the member being removed.
type memberClients struct {
	name string
	kube kubernetes.Interface
	meta metadata.Interface
}

func newMemberClients(ctx context.Context, name string, cfg *rest.Config) (*memberClients, error) {
	kube, _, err := reach(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = requestTimeout
	// Listing every resource type would print a warning per deprecated one.
	cfg.WarningHandler = rest.NoWarnings{}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &memberClients{name: name, kube: kube, meta: meta}, nil
}

// cleanUp deletes what atoll owns in the member, then join's
// ClusterRoleBinding. That binding owns the ServiceAccount, its token
// Secret and (when join created it) the namespace, so the member's garbage
// collector removes them; deleting it is the last call these credentials
// are allowed to make.
func (m *memberClients) cleanUp(ctx context.Context, w io.Writer, cp *controlPlane) error {
	r, err := m.deleteOwned(ctx, cp)
	if err != nil {
		return fmt.Errorf("cluster %s: deleting managed objects: %w", m.name, err)
	}
	fmt.Fprintf(w, "cluster %s: %d objects deleted, %d handed back (taken over, preserved, or a namespace holding others' objects), %d left alone (labelled %s but not atoll's)\n",
		m.name, r.deleted, r.handedBack, r.foreign, workv1alpha2.ManagedLabel)
	if r.unseen != nil {
		fmt.Fprintf(w, "cluster %s: not looked at, so atoll's objects there stay and its namespaces are handed back: %v\n", m.name, r.unseen)
	}

	sa := serviceAccountName(m.name)
	background := metav1.DeletePropagationBackground
	err = m.kube.RbacV1().ClusterRoleBindings().Delete(ctx, sa, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %s: deleting ClusterRoleBinding %s: %w", m.name, sa, err)
	}
	fmt.Fprintf(w, "cluster %s: ClusterRoleBinding %s deleted; ServiceAccount %s/%s, its token Secret and namespace %s (unless in use) follow by garbage collection\n",
		m.name, sa, memberNamespace, sa, memberNamespace)
	return nil
}

// cleanupResult counts what unjoin did to labelled member objects; unseen
// says which API groups did not answer discovery (nil: none).
type cleanupResult struct {
	deleted, handedBack, foreign int
	unseen                       error
}

// memberObject is one labelled object found in the member.
type memberObject struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	meta       metav1.PartialObjectMetadata
}

// deleteOwned deletes, in every resource the member can list and delete,
// the objects that carry the ownership record of a binding that exists in
// the control plane with that permanent id; an object that only carries
// the managed label is someone else's and left alone. Taken-over and
// preserved objects are handed back (atoll's marks removed). Namespaced
// objects go first; an owned namespace that still holds objects atoll did
// not create is handed back, never deleted.
func (m *memberClients) deleteOwned(ctx context.Context, cp *controlPlane) (cleanupResult, error) {
	var r cleanupResult
	resources, err := m.resources(ctx)
	if err != nil {
		return r, err
	}
	r.unseen = resources.unseen
	owned := ownerCheck{cp: cp, ids: map[ownership.Record]bool{}}
	var namespaced, clusterScoped, namespaces []memberObject
	seen := sets.New[types.UID]()
	selector := labels.SelectorFromSet(labels.Set{workv1alpha2.ManagedLabel: "true"}).String()
	for _, res := range resources.list {
		err := m.listIn(ctx, res, "", metav1.ListOptions{LabelSelector: selector}, func(o memberObject) error {
			if seen.Has(o.meta.UID) {
				return nil // the same object under another group (events)
			}
			seen.Insert(o.meta.UID)
			mine, err := owned.check(ctx, &o.meta)
			if err != nil {
				return err
			}
			switch {
			case !mine:
				r.foreign++
			case o.gvr.Group == "" && o.gvr.Resource == "namespaces":
				namespaces = append(namespaces, o)
			case o.namespaced:
				namespaced = append(namespaced, o)
			default:
				clusterScoped = append(clusterScoped, o)
			}
			return nil
		})
		if err != nil {
			return r, err
		}
	}
	deleted := sets.New[types.UID]()
	for _, group := range [][]memberObject{namespaced, clusterScoped, namespaces} {
		for _, o := range group {
			if err := m.letGo(ctx, o, &owned, resources, deleted, &r); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// letGo deletes an owned object, or hands it back (atoll's marks removed)
// when it was taken over or preserved, or is a namespace that holds
// objects atoll did not create. Only the version listed is deleted or
// patched: one changed since (taken over meanwhile, say) is read and
// decided again, a few times at most.
func (m *memberClients) letGo(ctx context.Context, o memberObject, owned *ownerCheck, resources memberResources,
	deleted sets.Set[types.UID], r *cleanupResult) error {
	ri := m.meta.Resource(o.gvr).Namespace(o.meta.Namespace)
	for attempt := 1; ; attempt++ {
		err := m.letGoOnce(ctx, ri, o, resources, deleted, r)
		if !errors.Is(err, ownership.ErrChanged) || attempt == letGoAttempts {
			return err
		}
		fresh, err := ri.Get(ctx, o.meta.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s %s/%s again: %w", o.gvr.GroupResource(), o.meta.Namespace, o.meta.Name, err)
		}
		mine, err := owned.check(ctx, fresh)
		if err != nil {
			return err
		}
		if !mine {
			r.foreign++
			return nil
		}
		o.meta = *fresh
	}
}

// letGoAttempts bounds how often unjoin reads again an object that keeps
// changing under it.
const letGoAttempts = 3

// letGoOnce is one attempt of letGo; ownership.ErrChanged when the object
// is no longer the version in o.
func (m *memberClients) letGoOnce(ctx context.Context, ri metadata.ResourceInterface, o memberObject, resources memberResources,
	deleted sets.Set[types.UID], r *cleanupResult) error {
	keep := ownership.HandedOver(&o.meta)
	if !keep && o.gvr.Group == "" && o.gvr.Resource == "namespaces" {
		var err error
		if keep, err = m.holdsOthers(ctx, resources, o.meta.Name, deleted); err != nil {
			return err
		}
	}
	if keep {
		patch, err := ownership.HandBackPatch(&o.meta)
		if err != nil {
			return err
		}
		_, err = ri.Patch(ctx, o.meta.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		switch {
		case apierrors.IsConflict(err):
			return ownership.ErrChanged
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("handing back %s %s/%s: %w", o.gvr.GroupResource(), o.meta.Namespace, o.meta.Name, err)
		}
		r.handedBack++
		return nil
	}
	background := metav1.DeletePropagationBackground
	if err := ownership.Delete(ctx, ri, &o.meta, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		if errors.Is(err, ownership.ErrChanged) {
			return err
		}
		return fmt.Errorf("deleting %s %s/%s: %w", o.gvr.GroupResource(), o.meta.Namespace, o.meta.Name, err)
	}
	deleted.Insert(o.meta.UID)
	r.deleted++
	return nil
}

// memberResources are the resources unjoin may list and delete; unseen
// names the API groups that did not answer discovery (nil: all did),
// whose objects it cannot see.
type memberResources struct {
	list   []memberResource
	unseen error
}

// memberResource is a resource unjoin may list and delete.
type memberResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

func (m *memberClients) resources(ctx context.Context) (memberResources, error) {
	lists, err := m.kube.Discovery().ServerPreferredResourcesWithContext(ctx)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return memberResources{}, err
	}
	out := memberResources{unseen: err}
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") || !sets.New(r.Verbs...).HasAll("list", "delete") {
				continue
			}
			out.list = append(out.list, memberResource{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced})
		}
	}
	return out, nil
}

// listIn pages through res in namespace ns ("" for all) and hands each
// object to each.
func (m *memberClients) listIn(ctx context.Context, res memberResource, ns string, opts metav1.ListOptions, each func(memberObject) error) error {
	opts.Limit = 500
	for {
		list, err := m.meta.Resource(res.gvr).Namespace(ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing %s: %w", res.gvr.GroupResource(), err)
		}
		for i := range list.Items {
			if err := each(memberObject{gvr: res.gvr, namespaced: res.namespaced, meta: list.Items[i]}); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// holdsOthers reports whether namespace ns still holds an object atoll did
// not create: anything but what unjoin just deleted, their dependents (an
// owner reference: pods of a Deployment, say, on their way out) and what
// Kubernetes puts in every namespace. With an API group that did not
// answer discovery it may, unseen: deleting the namespace would take that
// group's objects in it once the group is back.
func (m *memberClients) holdsOthers(ctx context.Context, resources memberResources, ns string, deleted sets.Set[types.UID]) (bool, error) {
	if resources.unseen != nil {
		return true, nil
	}
	errFound := fmt.Errorf("found")
	for _, res := range resources.list {
		if !res.namespaced || res.gvr.Resource == "events" {
			continue
		}
		err := m.listIn(ctx, res, ns, metav1.ListOptions{}, func(o memberObject) error {
			switch {
			case deleted.Has(o.meta.UID), len(o.meta.OwnerReferences) > 0, o.meta.DeletionTimestamp != nil:
				return nil
			case res.gvr.Group == "" && res.gvr.Resource == "serviceaccounts" && o.meta.Name == "default",
				res.gvr.Group == "" && res.gvr.Resource == "configmaps" && o.meta.Name == "kube-root-ca.crt":
				return nil
			}
			return errFound
		})
		if errors.Is(err, errFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// ownerCheck verifies ownership records against the control plane: a
// record counts only when its binding exists there with that permanent id.
type ownerCheck struct {
	cp  *controlPlane
	ids map[ownership.Record]bool
}

func (c *ownerCheck) check(ctx context.Context, obj metav1.Object) (bool, error) {
	rec, ok := ownership.Of(obj)
	if !ok {
		return false, nil
	}
	if mine, done := c.ids[rec]; done {
		return mine, nil
	}
	gvr, label := rbGVR, workv1alpha2.ResourceBindingPermanentIDLabel
	if rec.Cluster {
		gvr, label = crbGVR, workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	b, err := c.cp.dyn.Resource(gvr).Namespace(rec.Namespace).Get(ctx, rec.Name, metav1.GetOptions{})
	mine := false
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, fmt.Errorf("control plane: reading %s %s/%s to check ownership: %w", gvr.Resource, rec.Namespace, rec.Name, err)
	default:
		mine = b.GetLabels()[label] == rec.PermanentID
	}
	c.ids[rec] = mine
	return mine, nil
}

var (
	rbGVR  = workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings")
	crbGVR = workv1alpha2.SchemeGroupVersion.WithResource("clusterresourcebindings")
)
