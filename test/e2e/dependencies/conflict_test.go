package dependencies

import (
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
// SyncScheduleResultToDependenciesSucceed.
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
}
