package rebalance

import (
	"strings"
	"testing"
	"time"

	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestMoveWithoutHPA: 12 replicas of a Deployment without an HPA move from
// 1:1 to 1:2 when the policy's weights change. Sampled every second, the
// Ready pods never total less than 12, member2 only grows and member1 only
// shrinks, and member2 has grown before member1 loses a pod. atoll creates
// the Rebalance, which ends Completed at 4/8, and `atoll rebalance list`
// shows it.
func TestMoveWithoutHPA(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	ns, app := "plain", "web"
	pp := plainWorkload(ctx, t, ns, app, 12, 1, 1, map[string]int{"member1": 6, "member2": 6})

	s := startSampler(ctx, t, ns, app)
	setWeights(t, pp, 1, 2)
	name := names.BindingName("Deployment", app)
	rb := waitCompleted(ctx, t, ns, name, "4:8", 4*time.Minute)
	waitRunning(ctx, t, ns, app, map[string]int{"member1": 4, "member2": 8}, time.Minute)
	s.end()
	samples := s.all()
	logSamples(t, samples)

	checkFloor(t, samples, 12)
	checkMonotonic(t, samples, map[string]bool{"member2": true})
	for _, smp := range samples {
		if smp.replicas["member1"] < 6 {
			if smp.ready["member2"] <= 6 {
				t.Errorf("member1 shrank before member2 had new Ready pods: %s", smp)
			}
			break
		}
	}
	if got := rb.Status.Summary; got.From != "6:6" || got.To != "4:8" || got.Progress != "100%" {
		t.Errorf("summary %+v, want from 6:6 to 4:8 at 100%%", got)
	}
	if rb.Status.Step < 1 || len(rb.Status.History) == 0 {
		t.Errorf("no steps recorded: %s", describeRebalance(rb))
	}
	out := world.Atoll(t, "rebalance", "list", "-A", "--kubeconfig", world.Kubeconfig)
	if !strings.Contains(out, name) || !strings.Contains(out, "Completed") || !strings.Contains(out, "Deployment/web") {
		t.Errorf("atoll rebalance list -A:\n%s", out)
	}
	out = world.Atoll(t, "rebalance", "status", ns+"/"+name, "--kubeconfig", world.Kubeconfig)
	for _, want := range []string{"Phase:      Completed", "member1", "member2", "Recent steps:"} {
		if !strings.Contains(out, want) {
			t.Errorf("atoll rebalance status lacks %q:\n%s", want, out)
		}
	}
	t.Logf("atoll rebalance status:\n%s", out)
}
