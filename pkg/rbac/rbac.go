// Package rbac is the least privilege atoll's controller-manager needs in
// the control plane, as RBAC objects: `atoll rbac` prints them for a
// controller-manager run against an existing API server, and `atoll up`
// installs them and runs its embedded controller-manager with that
// identity instead of as a superuser (DESIGN.md section 9, rule 6).
package rbac

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/atoll-dev/atoll/pkg/util/names"
)

const (
	// ControllerManagerUser is the user name of the embedded
	// controller-manager (its bearer token's, in the API server's token
	// file).
	ControllerManagerUser = "atoll-controller-manager"
	// ClusterRoleName is the ClusterRole of the controller-manager.
	ClusterRoleName = "atoll:controller-manager"
	// SystemRoleName is its Role in the system namespace: the leader Lease
	// and the executor's pending withdrawals (ConfigMaps).
	SystemRoleName = "atoll:controller-manager:system"
)

// Rules are what the controller-manager may do cluster-wide. Notably
// absent: creating, updating or deleting anything but atoll's own API
// objects and events, and creating subresources (pods/exec,
// serviceaccounts/token, ...). RBAC objects are patched (claim labels)
// with escalate and bind, see the last rule.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		// Templates: the detector watches every resource (metadata only) and
		// labels the templates it claims; the executor reads templates in
		// full and patches their aggregated status; the hpa-marker labels
		// workloads and the deployment-replicas-syncer sets the replicas of
		// Divided Deployments member HPAs scale. Cluster credentials are
		// read from karmada-cluster.
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "patch"}},
		// atoll's own objects: bindings are created, updated and deleted,
		// policies get permanent ids, clusters get status and taints,
		// rebalances are created for workloads under migration.
		{APIGroups: []string{"work.karmada.io", "policy.karmada.io", "cluster.karmada.io", "apps.atoll.dev"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		// Tenants are the platform admins': read, with the resolved
		// boundary written to their status.
		{APIGroups: []string{"policy.atoll.dev"}, Resources: []string{"tenants"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"policy.atoll.dev"}, Resources: []string{"tenants/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		// Claiming an RBAC template is a patch of its labels, and the API
		// server checks every write of a Role against the writer's own
		// rules (and of a binding against the role it binds): without
		// escalate and bind, a Role granting more than these rules (an
		// operator's, in a baseline) could never be claimed.
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "clusterroles"}, Verbs: []string{"escalate", "bind"}},
	}
}

// Subject is whom the roles are bound to.
type Subject = rbacv1.Subject

// UserSubject is the embedded controller-manager's identity.
func UserSubject(user string) Subject {
	return Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
}

// Objects are the RBAC objects (and the system namespace they need) for
// subject, in apply order.
func Objects(subject Subject) (*corev1.Namespace, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding) {
	labels := map[string]string{"app.kubernetes.io/managed-by": names.FieldManager}
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: names.SystemNamespace, Labels: labels}}
	role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: labels}, Rules: Rules()}
	binding := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
		Subjects:   []rbacv1.Subject{subject}}
	leRole := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: SystemRoleName, Namespace: names.SystemNamespace, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			// delete: a sharded controller-manager removes the presence
			// Leases of processes gone for long (pkg/shard).
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		}}
	leBinding := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: SystemRoleName, Namespace: names.SystemNamespace, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: SystemRoleName},
		Subjects:   []rbacv1.Subject{subject}}
	return ns, role, binding, leRole, leBinding
}

// Manifests is Objects as YAML documents.
func Manifests(subject Subject) ([][]byte, error) {
	ns, role, binding, leRole, leBinding := Objects(subject)
	var out [][]byte
	for _, obj := range []any{ns, role, binding, leRole, leBinding} {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// Apply installs Objects(subject) with server-side apply, as an admin.
func Apply(ctx context.Context, cfg *rest.Config, subject Subject) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, role, binding, leRole, leBinding := Objects(subject)
	opts := metav1.PatchOptions{FieldManager: names.FieldManager, Force: ptr.To(true)}
	steps := []struct {
		what  string
		obj   any
		apply func([]byte) error
	}{
		{"Namespace " + ns.Name, ns, func(b []byte) error {
			_, err := kube.CoreV1().Namespaces().Patch(ctx, ns.Name, types.ApplyPatchType, b, opts)
			return err
		}},
		{"ClusterRole " + role.Name, role, func(b []byte) error {
			_, err := kube.RbacV1().ClusterRoles().Patch(ctx, role.Name, types.ApplyPatchType, b, opts)
			return err
		}},
		{"ClusterRoleBinding " + binding.Name, binding, func(b []byte) error {
			_, err := kube.RbacV1().ClusterRoleBindings().Patch(ctx, binding.Name, types.ApplyPatchType, b, opts)
			return err
		}},
		{"Role " + leRole.Name, leRole, func(b []byte) error {
			_, err := kube.RbacV1().Roles(leRole.Namespace).Patch(ctx, leRole.Name, types.ApplyPatchType, b, opts)
			return err
		}},
		{"RoleBinding " + leBinding.Name, leBinding, func(b []byte) error {
			_, err := kube.RbacV1().RoleBindings(leBinding.Namespace).Patch(ctx, leBinding.Name, types.ApplyPatchType, b, opts)
			return err
		}},
	}
	for _, s := range steps {
		b, err := json.Marshal(s.obj)
		if err != nil {
			return err
		}
		if err := s.apply(b); err != nil {
			return fmt.Errorf("applying %s: %w", s.what, err)
		}
	}
	return nil
}
