package join

import (
	"context"
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
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/clustercache"
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
		if err := member.cleanUp(ctx, w); err != nil {
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

// cleanUp deletes the member's managed objects, then join's
// ClusterRoleBinding. That binding owns the ServiceAccount, its token
// Secret and (when join created it) the namespace, so the member's garbage
// collector removes them; deleting it is the last call these credentials
// are allowed to make.
func (m *memberClients) cleanUp(ctx context.Context, w io.Writer) error {
	deleted, kept, err := m.deleteManaged(ctx)
	if err != nil {
		return fmt.Errorf("cluster %s: deleting managed objects: %w", m.name, err)
	}
	fmt.Fprintf(w, "cluster %s: %d managed objects deleted, %d kept (%s=true)\n", m.name, deleted, kept, names.PreserveOnDeleteAnnotation)

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

// deleteManaged deletes every object labelled karmada.io/managed=true in
// every resource the member can list and delete, unless annotated
// atoll.dev/preserve-on-delete=true. Namespaced objects go first; a managed
// namespace that holds a preserved object is kept.
func (m *memberClients) deleteManaged(ctx context.Context) (deleted, kept int, err error) {
	lists, err := m.kube.Discovery().ServerPreferredResourcesWithContext(ctx)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return 0, 0, err
	}
	type object struct {
		gvr             schema.GroupVersionResource
		namespace, name string
	}
	var namespaced, clusterScoped, namespaces []object
	preservedIn := sets.New[string]()
	seen := sets.New[types.UID]()
	selector := labels.SelectorFromSet(labels.Set{names.ManagedLabel: "true"}).String()
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") || !sets.New(r.Verbs...).HasAll("list", "delete") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			opts := metav1.ListOptions{LabelSelector: selector, Limit: 500}
			for {
				list, err := m.meta.Resource(gvr).List(ctx, opts)
				if err != nil {
					return deleted, kept, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
				}
				for _, o := range list.Items {
					if seen.Has(o.UID) {
						continue // the same object under another group (events)
					}
					seen.Insert(o.UID)
					if o.Annotations[names.PreserveOnDeleteAnnotation] == "true" {
						kept++
						preservedIn.Insert(o.Namespace)
						if gvr.Group == "" && gvr.Resource == "namespaces" {
							preservedIn.Insert(o.Name)
						}
						continue
					}
					obj := object{gvr, o.Namespace, o.Name}
					switch {
					case gvr.Group == "" && gvr.Resource == "namespaces":
						namespaces = append(namespaces, obj)
					case r.Namespaced:
						namespaced = append(namespaced, obj)
					default:
						clusterScoped = append(clusterScoped, obj)
					}
				}
				if list.Continue == "" {
					break
				}
				opts.Continue = list.Continue
			}
		}
	}
	background := metav1.DeletePropagationBackground
	for _, group := range [][]object{namespaced, clusterScoped, namespaces} {
		for _, o := range group {
			if o.gvr.Resource == "namespaces" && o.gvr.Group == "" && preservedIn.Has(o.name) {
				kept++
				continue
			}
			err := m.meta.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, o.name, metav1.DeleteOptions{PropagationPolicy: &background})
			if err != nil && !apierrors.IsNotFound(err) {
				return deleted, kept, fmt.Errorf("deleting %s %s/%s: %w", o.gvr.GroupResource(), o.namespace, o.name, err)
			}
			deleted++
		}
	}
	return deleted, kept, nil
}
