// Package join registers member clusters with the control plane and
// removes them (`atoll join`, `atoll unjoin`), the way karmadactl does for
// push-mode clusters: a ServiceAccount with cluster-admin in the member,
// its token in a control-plane Secret, and a Cluster object.
package join

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

const (
	// memberNamespace holds the join ServiceAccounts in a member (Karmada's
	// name).
	memberNamespace = "karmada-cluster"
	// managedByLabel marks what join created in a member.
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "atoll"
	// fieldManager writes what join applies.
	fieldManager = "atoll-join"
	// tokenWait bounds the wait for the member's token controller.
	tokenWait = 30 * time.Second
	// requestTimeout bounds every request join and unjoin make.
	requestTimeout = 10 * time.Second
)

var clusterGVR = clusterv1alpha1.GroupVersion.WithResource(clusterv1alpha1.ResourcePluralCluster)

// serviceAccountName is the member ServiceAccount of cluster (Karmada's
// karmada-NAME), also the name of its ClusterRoleBinding.
func serviceAccountName(cluster string) string { return "karmada-" + cluster }

func tokenSecretName(cluster string) string { return serviceAccountName(cluster) + "-token" }

// controlPlane is the clients of the control plane.
type controlPlane struct {
	host string
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newControlPlane(path string) (*controlPlane, error) {
	cfg, err := kubeconfig.Load(path, "")
	if err != nil {
		return nil, fmt.Errorf("control plane: %w", err)
	}
	cfg.Timeout = requestTimeout
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &controlPlane{host: cfg.Host, kube: kube, dyn: dyn}, nil
}

// getCluster returns the Cluster name, nil when there is none.
func (cp *controlPlane) getCluster(ctx context.Context, name string) (*clusterv1alpha1.Cluster, error) {
	u, err := cp.dyn.Resource(clusterGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot reach the control plane at %s: %w", cp.host, err)
	}
	c := &clusterv1alpha1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
		return nil, fmt.Errorf("decoding cluster %s: %w", name, err)
	}
	return c, nil
}

func loadMember(name, path, context string) (*rest.Config, error) {
	cfg, err := kubeconfig.Load(path, context)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: --cluster-kubeconfig: %w", name, err)
	}
	return cfg, nil
}

// reach checks that the member answers and returns its client and version.
func reach(ctx context.Context, name string, cfg *rest.Config) (kubernetes.Interface, string, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = requestTimeout
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach cluster %s at %s: %w", name, cfg.Host, err)
	}
	v, err := kube.Discovery().ServerVersionWithContext(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach cluster %s at %s: %w", name, cfg.Host, err)
	}
	return kube, v.GitVersion, nil
}

func out(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}

// Join registers cfg.Name: service account and token in the member, Secret
// and Cluster in the control plane. It is idempotent; joining again
// updates the Cluster and the stored credentials.
func Join(ctx context.Context, cfg *cmds.Join) error {
	w := out(cfg.Out)
	if err := cmds.ValidateClusterName(cfg.Name); err != nil {
		return err
	}
	memberCfg, err := loadMember(cfg.Name, cfg.ClusterKubeconfig, cfg.ClusterContext)
	if err != nil {
		return err
	}
	if memberCfg.Insecure && !cfg.AllowInsecure {
		return fmt.Errorf("cluster %s: --cluster-kubeconfig skips TLS verification (insecure-skip-tls-verify): the member would not be authenticated "+
			"and its cluster-admin token would go to whoever answers at %s; give the kubeconfig the member's CA, or pass --allow-insecure-skip-tls-verify", cfg.Name, memberCfg.Host)
	}
	member, version, err := reach(ctx, cfg.Name, memberCfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cluster %s reachable at %s (%s)\n", cfg.Name, memberCfg.Host, version)
	cp, err := newControlPlane(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	existing, err := cp.getCluster(ctx, cfg.Name)
	if err != nil {
		return err
	}
	// The member's identity, as Karmada records it: the UID of its
	// kube-system namespace. Checked before anything is written.
	ks, err := member.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cluster %s: reading namespace kube-system to identify the cluster: %w", cfg.Name, err)
	}
	id := string(ks.UID)
	if err := cp.checkIdentity(ctx, cfg.Name, id, existing); err != nil {
		return err
	}
	ca, err := caBundle(memberCfg)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cfg.Name, err)
	}

	token, secretCA, err := joinMember(ctx, w, cfg.Name, member)
	if err != nil {
		return err
	}
	if len(ca) == 0 && !memberCfg.Insecure {
		ca = secretCA
	}

	// Control plane: credentials, then the Cluster that names them.
	if err := ensureNamespace(ctx, cp.kube, names.ClusterSecretNamespace, nil); err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	data := map[string][]byte{clusterv1alpha1.SecretTokenKey: token}
	if len(ca) > 0 && !memberCfg.Insecure {
		data[clusterv1alpha1.SecretCADataKey] = ca
	}
	// The credentials are bound to the endpoint they are issued for: the
	// executor sends them nowhere else (clustercache.ConfigFor).
	secret := corev1ac.Secret(names.ClusterSecretName(cfg.Name), names.ClusterSecretNamespace).
		WithType(corev1.SecretTypeOpaque).WithData(data).
		WithAnnotations(map[string]string{clusterv1alpha1.CredentialEndpointAnnotation: memberCfg.Host})
	if _, err := cp.kube.CoreV1().Secrets(names.ClusterSecretNamespace).Apply(ctx, secret,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		return fmt.Errorf("control plane: storing the credentials of cluster %s: %w", cfg.Name, err)
	}
	fmt.Fprintf(w, "control plane: Secret %s/%s applied\n", names.ClusterSecretNamespace, names.ClusterSecretName(cfg.Name))

	obj := clusterObject(cfg, memberCfg, id)
	gated, err := cp.gated(ctx, cfg.Name, cfg.Labels, existing)
	if err != nil {
		return err
	}
	if gated != "" {
		// The taint is there from the first moment, so the scheduler never
		// places business workloads before the baseline (the baseline
		// controller removes it once the baseline is ready).
		_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"key": appsv1alpha1.BaselineTaintKey, "effect": string(corev1.TaintEffectNoSchedule)}}, "spec", "taints")
	}
	if _, err := cp.dyn.Resource(clusterGVR).Apply(ctx, cfg.Name, obj,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		return fmt.Errorf("control plane: applying cluster %s: %w", cfg.Name, err)
	}
	verb := "created"
	if existing != nil {
		verb = "updated"
	}
	fmt.Fprintf(w, "control plane: Cluster %s %s (Push, %s)\n", cfg.Name, verb, memberCfg.Host)
	if gated != "" && existing == nil {
		fmt.Fprintf(w, "control plane: Cluster %s waits for baselines %s (taint %s:NoSchedule)\n", cfg.Name, gated, appsv1alpha1.BaselineTaintKey)
	}
	return nil
}

// gated names the ClusterBaselines that gate a joining cluster ("" for
// none). A cluster joined before keeps whatever baseline taint it has: a
// re-join changes no taint.
func (cp *controlPlane) gated(ctx context.Context, name string, labels map[string]string, existing *clusterv1alpha1.Cluster) (string, error) {
	if existing != nil {
		if slices.ContainsFunc(existing.Spec.Taints, func(t corev1.Taint) bool { return t.Key == appsv1alpha1.BaselineTaintKey }) {
			return "(kept)", nil
		}
		return "", nil
	}
	list, err := cp.dyn.Resource(appsv1alpha1.GroupVersion.WithResource("clusterbaselines")).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil // a control plane without baselines
	}
	if err != nil {
		return "", fmt.Errorf("control plane: listing ClusterBaselines: %w", err)
	}
	var by []string
	for _, u := range list.Items {
		cb := &appsv1alpha1.ClusterBaseline{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cb); err != nil {
			return "", fmt.Errorf("decoding ClusterBaseline %s: %w", u.GetName(), err)
		}
		if baseline.Gates(cb, name, labels, time.Time{}) {
			by = append(by, cb.Name)
		}
	}
	return strings.Join(by, ", "), nil
}

// checkIdentity refuses a second registration of the same cluster (by
// kube-system UID, as karmadactl does) and the registration of a different
// cluster under a name that is taken: either would have atoll drive one
// cluster's workloads from two Clusters, or send one cluster's workloads
// to another.
func (cp *controlPlane) checkIdentity(ctx context.Context, name, id string, existing *clusterv1alpha1.Cluster) error {
	if existing != nil && existing.Spec.ID != "" && existing.Spec.ID != id {
		return fmt.Errorf("cluster %s: the name is taken by another cluster (kube-system UID %s; this one is %s); atoll unjoin %s first, or choose another name",
			name, existing.Spec.ID, id, name)
	}
	list, err := cp.dyn.Resource(clusterGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("control plane: listing clusters: %w", err)
	}
	for _, u := range list.Items {
		other, _, _ := unstructured.NestedString(u.Object, "spec", "id")
		if u.GetName() != name && other == id {
			return fmt.Errorf("cluster %s is already joined as %s (same kube-system UID %s); atoll unjoin %s first, or keep using that name",
				name, u.GetName(), id, u.GetName())
		}
	}
	return nil
}

// joinMember creates the member's namespace, ClusterRoleBinding,
// ServiceAccount and token Secret, and returns the token and the member's
// CA (ca.crt of the token Secret).
//
// The ClusterRoleBinding owns the ServiceAccount, the token Secret and, if
// join created it, the namespace: deleting the binding — the last thing
// unjoin can do with these very credentials — lets the member's garbage
// collector remove the rest. The namespace goes when no joined cluster
// owns it any more.
func joinMember(ctx context.Context, w io.Writer, name string, member kubernetes.Interface) (token, ca []byte, err error) {
	sa := serviceAccountName(name)
	labels := map[string]string{managedByLabel: managedByValue}
	binding := rbacv1ac.ClusterRoleBinding(sa).WithLabels(labels).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName("cluster-admin")).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithNamespace(memberNamespace).WithName(sa))
	crb, err := member.RbacV1().ClusterRoleBindings().Apply(ctx, binding, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: applying ClusterRoleBinding %s: %w", name, sa, err)
	}
	owner := metav1ac.OwnerReference().WithAPIVersion(rbacv1.SchemeGroupVersion.String()).WithKind("ClusterRoleBinding").
		WithName(crb.Name).WithUID(crb.UID)

	created, err := ensureNamespaceOwned(ctx, member, name, owner)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if created {
		fmt.Fprintf(w, "cluster %s: namespace %s created\n", name, memberNamespace)
	}
	fmt.Fprintf(w, "cluster %s: ClusterRoleBinding %s (cluster-admin) applied\n", name, sa)

	if _, err := member.CoreV1().ServiceAccounts(memberNamespace).Apply(ctx,
		corev1ac.ServiceAccount(sa, memberNamespace).WithLabels(labels).WithOwnerReferences(owner),
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		return nil, nil, fmt.Errorf("cluster %s: applying ServiceAccount %s/%s: %w", name, memberNamespace, sa, err)
	}
	fmt.Fprintf(w, "cluster %s: ServiceAccount %s/%s applied\n", name, memberNamespace, sa)

	secretName := tokenSecretName(name)
	apply := func() error {
		_, err := member.CoreV1().Secrets(memberNamespace).Apply(ctx,
			corev1ac.Secret(secretName, memberNamespace).WithLabels(labels).WithOwnerReferences(owner).
				WithAnnotations(map[string]string{corev1.ServiceAccountNameKey: sa}).
				WithType(corev1.SecretTypeServiceAccountToken),
			metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		return err
	}
	if err := apply(); err != nil {
		return nil, nil, fmt.Errorf("cluster %s: applying Secret %s/%s: %w", name, memberNamespace, secretName, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, tokenWait, true, func(ctx context.Context) (bool, error) {
		s, err := member.CoreV1().Secrets(memberNamespace).Get(ctx, secretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// The token controller deletes a token Secret of a replaced
			// ServiceAccount: ask again.
			return false, apply()
		}
		if err != nil {
			return false, err
		}
		token, ca = s.Data[corev1.ServiceAccountTokenKey], s.Data[corev1.ServiceAccountRootCAKey]
		return len(token) > 0, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: token Secret %s/%s not filled within %v (is the member's token controller running?): %w",
			name, memberNamespace, secretName, tokenWait, err)
	}
	fmt.Fprintf(w, "cluster %s: token Secret %s/%s ready\n", name, memberNamespace, secretName)
	return token, ca, nil
}

// ensureNamespaceOwned makes sure the member has namespace karmada-cluster.
// One that join created (labelled managed-by atoll) is owned by the
// ClusterRoleBindings of every cluster joined through it, each with its own
// field manager so joins of several names do not drop each other's owner.
func ensureNamespaceOwned(ctx context.Context, member kubernetes.Interface, name string, owner *metav1ac.OwnerReferenceApplyConfiguration) (bool, error) {
	labels := map[string]string{managedByLabel: managedByValue}
	ns, err := member.CoreV1().Namespaces().Get(ctx, memberNamespace, metav1.GetOptions{})
	created := false
	switch {
	case apierrors.IsNotFound(err):
		ns, err = member.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: memberNamespace, Labels: labels}},
			metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			ns, err = member.CoreV1().Namespaces().Get(ctx, memberNamespace, metav1.GetOptions{})
		} else {
			created = err == nil
		}
		if err != nil {
			return false, fmt.Errorf("creating namespace %s: %w", memberNamespace, err)
		}
	case err != nil:
		return false, fmt.Errorf("getting namespace %s: %w", memberNamespace, err)
	}
	if ns.Labels[managedByLabel] != managedByValue {
		return created, nil // not ours: never deleted by unjoin
	}
	_, err = member.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(memberNamespace).WithOwnerReferences(owner),
		metav1.ApplyOptions{FieldManager: fieldManager + "-" + name, Force: true})
	if err != nil {
		return created, fmt.Errorf("setting the owner of namespace %s: %w", memberNamespace, err)
	}
	return created, nil
}

// ensureNamespace creates namespace ns when it is missing.
func ensureNamespace(ctx context.Context, kube kubernetes.Interface, ns string, labels map[string]string) error {
	_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting namespace %s: %w", ns, err)
	}
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// caBundle is the CA the kubeconfig trusts for the member, if any.
func caBundle(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 || cfg.CAFile == "" {
		return cfg.CAData, nil
	}
	data, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA of --cluster-kubeconfig: %w", err)
	}
	return data, nil
}

// clusterObject is the Cluster join applies. Fields join does not set
// (taints, resource models, other labels) belong to others and are left
// alone by server-side apply.
func clusterObject(cfg *cmds.Join, memberCfg *rest.Config, id string) *unstructured.Unstructured {
	spec := map[string]any{
		"syncMode":    string(clusterv1alpha1.Push),
		"apiEndpoint": memberCfg.Host,
		"secretRef": map[string]any{
			"namespace": names.ClusterSecretNamespace,
			"name":      names.ClusterSecretName(cfg.Name),
		},
	}
	if id != "" {
		spec["id"] = id
	}
	if memberCfg.Insecure {
		spec["insecureSkipTLSVerification"] = true
	}
	if memberCfg.Proxy != nil {
		if u, err := memberCfg.Proxy(nil); err == nil && u != nil {
			spec["proxyURL"] = u.String()
		}
	}
	if cfg.Region != "" {
		spec["region"] = cfg.Region
	}
	if cfg.Zone != "" {
		spec["zones"] = []any{cfg.Zone}
	}
	if cfg.Provider != "" {
		spec["provider"] = cfg.Provider
	}
	metadata := map[string]any{"name": cfg.Name}
	if len(cfg.Labels) > 0 {
		labels := map[string]any{}
		for k, v := range cfg.Labels {
			labels[k] = v
		}
		metadata["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1alpha1.GroupVersion.String(),
		"kind":       clusterv1alpha1.ResourceKindCluster,
		"metadata":   metadata,
		"spec":       spec,
	}}
}
