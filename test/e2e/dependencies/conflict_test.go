package dependencies

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestDependencyPolicyConflict: two workloads share a ConfigMap and their
// policies disagree on conflictResolution and preserveResourcesOnDeletion.
// As in Karmada, the attached binding takes Overwrite and preserve when any
// requirer asks for them, and says so in a DependencyPolicyConflict event;
// the workloads get GetDependenciesSucceed, their bindings
// SyncScheduleResultToDependenciesSucceed. When b's policy then takes
// Overwrite too, the resolution stays Overwrite+preserve (no write) and a
// new event reports the conflict left: preserve only (Karmada's "conflict
// on preserve flag only").
func TestDependencyPolicyConflict(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "deps-conflict"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		configMap(ns, "shared", "v1"),
		deployment(ns, "a").EnvFromConfigMap("shared").Obj(),
		deployment(ns, "b").EnvFromConfigMap("shared").Obj(),
		utiltesting.MakePropagationPolicy("a", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "a").PropagateDeps().
			ConflictResolution(policyv1alpha1.ConflictOverwrite).PreserveResourcesOnDeletion().Obj(),
		utiltesting.MakePropagationPolicy("b", ns).ClusterNames("member2").Select("apps/v1", "Deployment", "b").PropagateDeps().Obj(),
	)
	expect(ctx, t, ns, "ConfigMap", "shared", "v1", "member1", "member2")
	attached := names.BindingName("ConfigMap", "shared")
	framework.Eventually(t, time.Minute, "the attached binding takes Overwrite and preserve", func() (bool, string) {
		var b workv1alpha2.ResourceBinding
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: attached}, &b); err != nil {
			return false, err.Error()
		}
		preserve := b.Spec.PreserveResourcesOnDeletion != nil && *b.Spec.PreserveResourcesOnDeletion
		return b.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite && preserve,
			string(b.Spec.ConflictResolution) + " " + describeBinding(ctx, t, ns, "ConfigMap", "shared")
	})
	checks := []struct{ object, reason, says string }{
		{attached, events.DependencyPolicyConflict, "ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false)"},
		{"a", events.GetDependenciesSucceed, "ConfigMap/shared"},
		{names.BindingName("Deployment", "a"), events.SyncScheduleResultToDependenciesSucceed, ""},
	}
	for _, ch := range checks {
		framework.Eventually(t, time.Minute, ch.reason+" on "+ch.object, func() (bool, string) {
			have, err := framework.EventReasons(ctx, c, ns, ch.object)
			if err != nil {
				return false, err.Error()
			}
			msg, ok := have[ch.reason]
			return ok && strings.Contains(msg, ch.says), "message " + msg
		})
	}

	var pb policyv1alpha1.PropagationPolicy
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, &pb); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(pb.DeepCopy())
	pb.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	if err := c.Patch(ctx, &pb, patch); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "a DependencyPolicyConflict for preserve only", func() (bool, string) {
		msgs, err := framework.EventMessages(ctx, c, ns, attached, events.DependencyPolicyConflict)
		if err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(msgs, func(m string) bool {
			return strings.Contains(m, "PreserveResourcesOnDeletion conflicted (true vs false)") && !strings.Contains(m, "ConflictResolution")
		}), fmt.Sprintf("messages %q", msgs)
	})
}
