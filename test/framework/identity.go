package framework

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/pkg/manager"
)

// ServiceAccountClient creates ServiceAccount namespace/name in the control
// plane (if missing), binds it cluster-wide to the ClusterRole role, and
// returns a client that authenticates as it with a bound token from the
// TokenRequest API: a real identity, checked by the API server's RBAC and
// admission like any user's.
func (cp *ControlPlane) ServiceAccountClient(t testing.TB, namespace, name, role string) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	admin := cp.RESTConfig(t)
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := kube.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating ServiceAccount %s/%s: %v", namespace, name, err)
	}
	bind(ctx, t, kube, role, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name})
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return newClient(t, cfg)
}

// CertificateClient returns a client that authenticates as user in groups
// with a client certificate signed by the control plane's CA (as a user
// handed a kubeconfig by an admin would), bound cluster-wide to the
// ClusterRole role as a User.
func (cp *ControlPlane) CertificateClient(t testing.TB, user string, groups []string, role string) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	admin := cp.RESTConfig(t)
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	bind(ctx, t, kube, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
	ca, err := pki.LoadOrCreateCA(pki.Files{Dir: filepath.Join(cp.DataDir, "pki")}, "unused", time.Now())
	if err != nil {
		t.Fatalf("loading the control plane's CA: %v", err)
	}
	dir := t.TempDir()
	cert, key, err := pki.EnsureLeaf(ca, filepath.Join(dir, user+".crt"), filepath.Join(dir, user+".key"),
		pki.LeafSpec{CommonName: user, Organization: groups, Client: true}, time.Now())
	if err != nil {
		t.Fatalf("signing a certificate for %s: %v", user, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.CertData, cfg.KeyData = cert, key
	return newClient(t, cfg)
}

// bind binds subject cluster-wide to the ClusterRole role (once).
func bind(ctx context.Context, t testing.TB, kube kubernetes.Interface, role string, subject rbacv1.Subject) {
	t.Helper()
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + ":" + subject.Kind + ":" + subject.Namespace + ":" + subject.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("binding %s %s to %s: %v", subject.Kind, subject.Name, role, err)
	}
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("building a client: %v", err)
	}
	return c
}
