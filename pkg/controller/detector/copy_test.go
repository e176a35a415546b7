package detector

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// scaleBinding is a scheduled binding with status from a scale run: a
// Deployment's or a ConfigMap's from BenchmarkTemplates100k, or a
// Deployment's under a 12-cluster weighted policy ("weighted").
func scaleBinding(t testing.TB, doc string) *workv1alpha2.ResourceBinding {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "manager", "testdata", "binding-"+doc+".json"))
	if err != nil {
		t.Fatal(err)
	}
	b := &workv1alpha2.ResourceBinding{}
	if err := json.Unmarshal(data, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCopyForRender: what renderBinding changes in the copy (metadata,
// spec) never reaches the original, and the status is the original's.
func TestCopyForRender(t *testing.T) {
	rb := scaleBinding(t, "weighted")
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: *rb.ObjectMeta.DeepCopy(), Spec: *rb.Spec.DeepCopy(), Status: *rb.Status.DeepCopy()}
	crb.SetGroupVersionKind(workv1alpha2.SchemeGroupVersion.WithKind(workv1alpha2.ResourceKindClusterResourceBinding))
	for name, orig := range map[string]client.Object{"ResourceBinding": rb, "ClusterResourceBinding": crb} {
		t.Run(name, func(t *testing.T) {
			before := orig.DeepCopyObject()
			cp := copyForRender(orig)
			meta, spec := bindingParts(cp)
			oldMeta, oldSpec := bindingParts(orig)
			if !semantic.Equal(meta, oldMeta) || !semantic.Equal(spec, oldSpec) || !semantic.Equal(cp, orig) {
				t.Fatal("the copy differs before anything is rendered")
			}
			meta.Labels["new"], meta.Annotations["new"] = "x", "x"
			meta.OwnerReferences = append(meta.OwnerReferences, meta.OwnerReferences...)
			meta.Finalizers[0] = "changed"
			spec.Replicas++
			spec.Placement.ClusterAffinity = nil
			spec.Clusters[0].Replicas++
			if !semantic.Equal(orig, before) {
				t.Error("rendering into the copy changed the original")
			}
			if cp.GetObjectKind().GroupVersionKind() != orig.GetObjectKind().GroupVersionKind() {
				t.Errorf("the copy's kind is %v, want %v", cp.GetObjectKind().GroupVersionKind(), orig.GetObjectKind().GroupVersionKind())
			}
			if len(bindingkind.Status(cp).AggregatedStatus) == 0 || &bindingkind.Status(cp).AggregatedStatus[0] != &bindingkind.Status(orig).AggregatedStatus[0] {
				t.Error("the copy's status is not the original's")
			}
		})
	}
}

// BenchmarkUnchangedBinding is the detector's check of a binding whose
// template did not change (every binding after a restart): copy it, render
// nothing new into it, compare; the whole binding as before, metadata and
// spec as copyForRender allows.
func BenchmarkUnchangedBinding(b *testing.B) {
	for _, doc := range []string{"deployment", "configmap", "weighted"} {
		existing := scaleBinding(b, doc)
		b.Run(doc+"/whole binding", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !semantic.Equal(existing, existing.DeepCopyObject()) {
					b.Fatal("changed")
				}
			}
		})
		b.Run(doc+"/metadata and spec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cp := copyForRender(existing)
				meta, spec := bindingParts(cp)
				oldMeta, oldSpec := bindingParts(existing)
				if !semantic.Equal(oldMeta, meta) || !semantic.Equal(oldSpec, spec) {
					b.Fatal("changed")
				}
			}
		})
	}
}
