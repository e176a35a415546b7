package integration

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/manager"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
	"github.com/atoll-dev/atoll/pkg/util/untracked"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestWritesClearFieldOwnership writes through a client as the controllers
// have it (untracked over the stale-write guard), here told to clear the
// record of Deployments, on a Deployment no policy claims so that nothing
// else writes it meanwhile (the controllers' own binding writes are
// checked end to end, TestOneStatusWritePerPlacement): the first patch
// clears the API server's field-ownership record and later writes, the
// status subresource's and an update included, do not start it again; a
// ConfigMap keeps its record; an apply is sent as it is and starts the
// record again, until the next patch.
func TestWritesClearFieldOwnership(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	plain := shared.Client(t)
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := client.NewWithWatch(shared.RESTConfig(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := untracked.Writes(stalewrites.Guard(raw, stalewrites.New(nil), "test"), schema.GroupKind{Group: "apps", Kind: "Deployment"})

	framework.CreateNamespace(t, plain, "untracked")
	d := framework.Deployment("web", "untracked").Obj()
	framework.CreateAndCleanup(t, plain, d)
	if len(d.ManagedFields) == 0 {
		t.Fatal("the API server recorded no field ownership on create; the test cannot tell a clear from nothing")
	}
	stored := func() []metav1.ManagedFieldsEntry {
		t.Helper()
		got := &appsv1.Deployment{}
		if err := plain.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			t.Fatal(err)
		}
		return got.ManagedFields
	}

	// The controllers' caches drop managedFields: patch from such a copy.
	base := d.DeepCopy()
	base.ManagedFields = nil
	patched := base.DeepCopy()
	patched.Labels = map[string]string{"step": "1"}
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		t.Fatal(err)
	}
	if mf := stored(); len(mf) != 0 {
		t.Errorf("after the first patch: managedFields %v, want none", framework.Managers(mf))
	}

	// Later writes, the status subresource's included, do not start it
	// again.
	base = patched.DeepCopy()
	base.ManagedFields = nil
	status := base.DeepCopy()
	status.Status.ObservedGeneration = status.Generation
	if err := c.Status().Patch(ctx, status, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	base = status.DeepCopy()
	base.ManagedFields = nil
	again := base.DeepCopy()
	again.Labels["step"] = "2"
	if err := c.Update(ctx, again); err != nil {
		t.Fatal(err)
	}
	if mf := stored(); len(mf) != 0 {
		t.Errorf("after a status patch and an update: managedFields %v, want none", framework.Managers(mf))
	}

	// Other kinds keep their record.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "untracked"}, Data: map[string]string{"a": "1"}}
	framework.CreateAndCleanup(t, plain, cm)
	cmBase := cm.DeepCopy()
	cmBase.ManagedFields = nil
	cmPatched := cmBase.DeepCopy()
	cmPatched.Data["a"] = "2"
	if err := c.Patch(ctx, cmPatched, client.MergeFrom(cmBase)); err != nil {
		t.Fatal(err)
	}
	if len(cmPatched.ManagedFields) == 0 {
		t.Error("a ConfigMap's patch cleared its field ownership; only the named kinds' should be")
	}

	// An apply is sent unchanged (an apply naming managedFields is
	// refused) and starts the record again; the next patch clears it.
	applied := &unstructured.Unstructured{}
	applied.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	applied.SetNamespace(d.Namespace)
	applied.SetName(d.Name)
	applied.SetLabels(map[string]string{"applied": "yes"})
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner("someone"), client.ForceOwnership); err != nil {
		t.Fatalf("apply through the client: %v", err)
	}
	if len(applied.GetManagedFields()) == 0 {
		t.Error("the apply's response records no field ownership")
	}
	current := &appsv1.Deployment{}
	if err := plain.Get(ctx, client.ObjectKeyFromObject(d), current); err != nil {
		t.Fatal(err)
	}
	current.ManagedFields = nil
	base = current
	last := base.DeepCopy()
	last.Labels["step"] = "3"
	if err := c.Patch(ctx, last, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	if len(last.ManagedFields) != 0 {
		t.Errorf("the patch after an apply: managedFields %v, want none", framework.Managers(last.ManagedFields))
	}
}
