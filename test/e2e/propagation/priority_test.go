package propagation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/events"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestSchedulePriority: a policy's schedulePriority names a PriorityClass;
// its bindings carry that class's value (the scheduler takes higher values
// first). While the class does not exist no binding is made and the
// template says why; once it is created, the binding follows.
func TestSchedulePriority(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "sched-priority"
	framework.CreateNamespace(t, c, ns)
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "atoll-e2e-high"}, Value: 1000}
	framework.CreateAndCleanup(t, c, high)
	policy := func(name, class string) *policyv1alpha1.PropagationPolicy {
		pp := utiltesting.MakePropagationPolicy(name, ns).ClusterNames(members...).Select("apps/v1", "Deployment", name).Obj()
		pp.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: class}
		return pp
	}
	framework.Create(t, c,
		utiltesting.MakeDeployment("urgent", ns).Replicas(1).Obj(), policy("urgent", high.Name),
		utiltesting.MakeDeployment("later", ns).Replicas(1).Obj(), policy("later", "atoll-e2e-later"),
	)
	framework.Eventually(t, time.Minute, "urgent's binding has priority 1000", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "urgent-deployment")
		if err != nil {
			return false, err.Error()
		}
		return rb.Spec.SchedulePriority != nil && rb.Spec.SchedulePriority.Priority == 1000, "schedulePriority " + toString(rb.Spec.SchedulePriority)
	})
	framework.Eventually(t, time.Minute, "later's template says its PriorityClass is missing", func() (bool, string) {
		have, err := framework.EventReasons(ctx, c, ns, "later")
		if err != nil {
			return false, err.Error()
		}
		msg := have[events.ApplyPolicyFailed]
		return strings.Contains(msg, `PriorityClass "atoll-e2e-later" does not exist`), "message " + msg
	})
	if _, err := framework.GetBinding(ctx, c, ns, "later-deployment"); !apierrors.IsNotFound(err) {
		t.Fatalf("later has a binding before its PriorityClass exists: %v", err)
	}
	framework.CreateAndCleanup(t, c, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "atoll-e2e-later"}, Value: 10})
	framework.Eventually(t, 2*time.Minute, "later's binding, once its PriorityClass exists", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "later-deployment")
		if err != nil {
			return false, err.Error()
		}
		return rb.Spec.SchedulePriority != nil && rb.Spec.SchedulePriority.Priority == 10, "schedulePriority " + toString(rb.Spec.SchedulePriority)
	})
}

func toString(p *workv1alpha2.SchedulePriority) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(p.Priority)
}
