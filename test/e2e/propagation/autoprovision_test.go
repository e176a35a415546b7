package propagation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestNamespaceAutoProvision: a namespace created in the control plane
// reaches every member with no policy (Karmada's namespace sync), except
// one labelled namespace.karmada.io/skip-auto-propagation. Deleting it
// removes it from the members where it holds nothing atoll does not own; a
// member's namespace of the same name that existed before is never adopted,
// and one holding a PersistentVolumeClaim is handed back and kept, data and
// all.
func TestNamespaceAutoProvision(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	first, second := members[0], members[1]

	// The member's own namespace, made before the control plane's.
	own := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sync-preexisting"}}
	if _, err := world.MemberClientset(t, first).CoreV1().Namespaces().Create(ctx, own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.MemberClientset(t, first).CoreV1().Namespaces().Delete(ctx, "sync-preexisting", metav1.DeleteOptions{})
	})
	for _, ns := range []string{"sync-plain", "sync-data", "sync-preexisting"} {
		framework.CreateNamespace(t, c, ns)
	}
	framework.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sync-skipped",
		Labels: map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}}})
	t.Cleanup(func() { _ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sync-skipped"}}) })

	managed := func(m, ns string) (bool, string) {
		n, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return n.Labels[workv1alpha2.ManagedLabel] == "true", "labels " + labelString(n.Labels)
	}
	for _, m := range members {
		for _, ns := range []string{"sync-plain", "sync-data"} {
			framework.Eventually(t, time.Minute, m+" has namespace "+ns+" as atoll's", func() (bool, string) { return managed(m, ns) })
		}
	}
	framework.Eventually(t, time.Minute, second+" has namespace sync-preexisting as atoll's", func() (bool, string) {
		return managed(second, "sync-preexisting")
	})
	framework.Consistently(t, 10*time.Second, "the skipped namespace stays out of the members and the member's own namespace stays its own", func() (bool, string) {
		for _, m := range members {
			if _, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(ctx, "sync-skipped", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, m + " has sync-skipped: " + errString(err)
			}
		}
		if ok, why := managed(first, "sync-preexisting"); ok {
			return false, first + " adopted its own sync-preexisting: " + why
		}
		return true, ""
	})

	// What a StatefulSet leaves behind: a claim with no owner.
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "sync-data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := world.MemberClientset(t, first).CoreV1().PersistentVolumeClaims("sync-data").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, ns := range []string{"sync-plain", "sync-data", "sync-preexisting"} {
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(m, ns string) func() (bool, string) {
		return func() (bool, string) {
			_, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), errString(err)
		}
	}
	for _, m := range members {
		framework.Eventually(t, 2*time.Minute, m+": namespace sync-plain removed", gone(m, "sync-plain"))
	}
	framework.Eventually(t, 2*time.Minute, second+": namespace sync-data removed", gone(second, "sync-data"))
	framework.Eventually(t, 2*time.Minute, second+": namespace sync-preexisting removed", gone(second, "sync-preexisting"))
	framework.Eventually(t, time.Minute, first+": namespace sync-data handed back", func() (bool, string) {
		ok, why := managed(first, "sync-data")
		return !ok && why != "", why
	})
	framework.Consistently(t, 10*time.Second, first+" keeps its own sync-preexisting and the claim in sync-data", func() (bool, string) {
		for _, ns := range []string{"sync-preexisting", "sync-data"} {
			n, err := world.MemberClientset(t, first).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil || n.DeletionTimestamp != nil {
				return false, ns + ": " + errString(err)
			}
		}
		_, err := world.MemberClientset(t, first).CoreV1().PersistentVolumeClaims("sync-data").Get(ctx, "data-db-0", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	var b workv1alpha2.ClusterResourceBinding
	if err := c.Get(ctx, client.ObjectKey{Name: "sync-skipped-namespace"}, &b); !apierrors.IsNotFound(err) {
		t.Errorf("the skipped namespace has a binding: %v", err)
	}
}

func labelString(l map[string]string) string {
	out := ""
	for k, v := range l {
		out += k + "=" + v + " "
	}
	return out
}
