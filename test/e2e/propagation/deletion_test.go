package propagation

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestDeletionProtection: a template labelled
// resourcetemplate.karmada.io/deletion-protected: Always cannot be deleted
// (Karmada's deletion protection; the API server refuses it); without the
// label it can.
func TestDeletionProtection(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	c := world.Client(t)
	const ns = "protected"
	framework.CreateNamespace(t, c, ns)
	cm := utiltesting.MakeConfigMap("keep-me", ns).Data("k", "v").Obj()
	cm.Labels = map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Always"}
	framework.Create(t, c, cm)
	err := c.Delete(ctx, cm)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected (ConfigMap protected/keep-me") {
		t.Fatalf("deleting a protected ConfigMap: got %v, want Forbidden naming it", err)
	}
	framework.Update(t, c, cm, func(o *corev1.ConfigMap) { delete(o.Labels, "resourcetemplate.karmada.io/deletion-protected") })
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatalf("deleting it without the label: %v", err)
	}
}
