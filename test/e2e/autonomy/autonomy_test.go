package autonomy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var members = []string{"member1", "member2"}

const (
	ns  = "autonomy"
	app = "web"
)

func objects() []client.Object {
	return []client.Object{
		utiltesting.MakeNamespace(ns).Obj(),
		framework.Deployment(app, ns).Request(corev1.ResourceCPU, "200m").EnvFromConfigMap(app).Obj(),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}},
		utiltesting.MakeConfigMap(app, ns).Data("greeting", "hello").Obj(),
		framework.HPA(app, ns, 10),
		utiltesting.MakePropagationPolicy(app, ns).
			Select("apps/v1", "Deployment", app).Select("v1", "Service", app).Select("v1", "ConfigMap", app).
			Select("autoscaling/v2", "HorizontalPodAutoscaler", app).
			Placement(utiltesting.MakePlacement().ClusterNames(members...).Duplicated().Obj()).Obj(),
	}
}

// scaled is what a member shows of the workload.
type scaled struct {
	replicas, ready, hpaDesired int32
}

func (s scaled) String() string {
	return fmt.Sprintf("spec.replicas=%d ready=%d hpa.desired=%d", s.replicas, s.ready, s.hpaDesired)
}

func memberState(ctx context.Context, t *testing.T, name string) (scaled, error) {
	cs := world.MemberClientset(t, name)
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
	if err != nil {
		return scaled{}, err
	}
	h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, app, metav1.GetOptions{})
	if err != nil {
		return scaled{}, err
	}
	return scaled{replicas: ptr.Deref(d.Spec.Replicas, -1), ready: d.Status.ReadyReplicas, hpaDesired: h.Status.DesiredReplicas}, nil
}

// waitScaled waits until every member's HPA wants exactly want replicas
// and the member Deployment has that many, all Ready.
func waitScaled(ctx context.Context, t *testing.T, timeout time.Duration, what string, want int32) {
	t.Helper()
	for _, m := range members {
		framework.Eventually(t, timeout, m+": "+what, func() (bool, string) {
			s, err := memberState(ctx, t, m)
			if err != nil {
				return false, err.Error()
			}
			return s.hpaDesired == want && s.replicas == want && s.ready == want, s.String()
		})
	}
}

// atollApplied is the time of the `atoll` field manager's Apply entry.
func atollApplied(fields []metav1.ManagedFieldsEntry) string {
	for _, f := range fields {
		if f.Manager == names.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == "" {
			if f.Time == nil {
				return "<no time>"
			}
			return f.Time.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// memberObjects records, per member, what a write by atoll would change:
// resourceVersions of the Service and ConfigMap (nobody else writes them)
// and the time of atoll's apply on the Deployment and HPA (the HPA and the
// Deployment controller write those objects too).
func memberObjects(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	v := map[string]string{}
	for _, m := range members {
		cs := world.MemberClientset(t, m)
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v[m+"/deployment resourceVersion (for the log)"] = d.ResourceVersion
		v[m+"/deployment atoll apply time"] = atollApplied(d.ManagedFields)
		h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v[m+"/hpa atoll apply time"] = atollApplied(h.ManagedFields)
		svc, err := cs.CoreV1().Services(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v[m+"/service resourceVersion"] = svc.ResourceVersion
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v[m+"/configmap resourceVersion"] = cm.ResourceVersion
	}
	for k, val := range v {
		if val == "" {
			t.Fatalf("%s: no value (no atoll apply entry?)", k)
		}
	}
	return v
}

// refused reports how a connection to the control plane's API server
// fails: nil when it is refused.
func refused(server string) error {
	u, err := url.Parse(server)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err == nil {
		_ = conn.Close()
		return fmt.Errorf("%s accepts connections", u.Host)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: %w (want connection refused)", u.Host, err)
	}
	return nil
}

// aggregatedReplicas is status.replicas per cluster in the binding's
// aggregated status.
func aggregatedReplicas(rb *workv1alpha2.ResourceBinding) map[string]int32 {
	out := map[string]int32{}
	for _, item := range rb.Status.AggregatedStatus {
		var st struct {
			Replicas int32 `json:"replicas"`
		}
		if item.Status != nil {
			_ = json.Unmarshal(item.Status.Raw, &st)
		}
		out[item.ClusterName] = st.Replicas
	}
	return out
}

// TestMembersAutonomousWhileControlPlaneDown is the check from the issue:
// a Duplicated Deployment with its HPA runs in both members under load; the
// federation control plane crashes; the load triples and each member's HPA
// scales its Deployment up with every pod Ready, no federation needed; the
// control plane starts again, status catches up, and atoll writes nothing
// to the members (not even spec.replicas back).
func TestMembersAutonomousWhileControlPlaneDown(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	framework.Create(t, c, objects()...)
	framework.Eventually(t, time.Minute, "template marked retain-replicas by the hpa-marker", func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, &d); err != nil {
			return false, err.Error()
		}
		return d.Labels[interpreter.RetainReplicasLabel] == "true", fmt.Sprintf("labels %v", d.Labels)
	})

	// 600m over pods requesting 200m at a 50% target: 3 pods per member.
	world.Load(t, app, "600m")
	start := time.Now()
	waitScaled(ctx, t, 2*time.Minute, "HPA settled at 3 Ready replicas under 600m", 3)
	t.Logf("with the control plane up, the member HPAs settled at 3 replicas each %v after 600m of load", time.Since(start).Round(100*time.Millisecond))

	// Crash the federation control plane.
	var server string
	for _, f := range strings.Fields(world.ReadyLine) {
		if v, ok := strings.CutPrefix(f, "server="); ok {
			server = v
		}
	}
	if server == "" {
		t.Fatalf("no server= in the ready line %q", world.ReadyLine)
	}
	out := world.Fault(t, "control-plane", "stop")
	t.Logf("%s", strings.TrimSpace(out))
	t.Cleanup(func() {
		// Leave the world as atoll up expects it at the end of a failed run.
		if t.Failed() {
			world.Fault(t, "control-plane", "start --wait 0")
		}
	})
	if err := refused(server); err != nil {
		t.Fatalf("control plane stopped, but: %v", err)
	}
	var cp simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.ControlPlaneStatusFile(world.DataDir), &cp); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(cp.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("control-plane process %d: kill -0 = %v, want it gone", cp.PID, err)
	}

	// Triple the load: 1800m, 9 pods per member. Only the members act.
	down := time.Now()
	world.Load(t, app, "1800m")
	waitScaled(ctx, t, 2*time.Minute, "HPA scaled to 9 Ready replicas under 1800m, federation down", 9)
	hpaTook := time.Since(down)
	t.Logf("with the control plane down, the member HPAs scaled 3 -> 9 replicas each, all Ready, %v after the load tripled", hpaTook.Round(100*time.Millisecond))
	for _, m := range members {
		// The world routes traffic to the member's Ready pods.
		framework.Eventually(t, 30*time.Second, m+" reports 9 Ready web pods to the world", func() (bool, string) {
			var r simdir.ReadyReport
			if _, err := simdir.ReadJSON(simdir.ReadyFile(world.DataDir, m), &r); err != nil {
				return false, err.Error()
			}
			return r.Apps[app] == 9 && r.Time.After(down), fmt.Sprintf("ready report %+v", r)
		})
	}
	if err := refused(server); err != nil {
		t.Fatalf("the control plane came back while stopped: %v", err)
	}

	// Just before the restart: what a write by atoll would change.
	time.Sleep(2 * time.Second) // let the last status updates of the scale-up land
	before := memberObjects(ctx, t)
	t.Logf("member objects before the restart: %v", before)

	restart := time.Now()
	out = world.Fault(t, "control-plane", "start --wait 2m")
	t.Logf("%s (%v)", strings.TrimSpace(out), time.Since(restart).Round(100*time.Millisecond))
	if err := refused(server); err == nil {
		t.Fatalf("control plane started, but %s refuses connections", server)
	}

	// Statuses catch up: the binding aggregates 9 per member and the
	// template's status.replicas is their sum.
	c = world.Client(t)
	framework.Eventually(t, 90*time.Second, "binding and template status show 9 replicas per member", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", app))
		if err != nil {
			return false, err.Error()
		}
		agg := aggregatedReplicas(rb)
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, &d); err != nil {
			return false, err.Error()
		}
		ok := agg["member1"] == 9 && agg["member2"] == 9 && d.Status.Replicas == 18 && d.Status.ReadyReplicas == 18
		return ok, fmt.Sprintf("aggregated replicas %v, template status.replicas=%d ready=%d", agg, d.Status.Replicas, d.Status.ReadyReplicas)
	})
	t.Logf("after control-plane start, atoll's status caught up (binding and template: 2 x 9 = 18 replicas) %v after the start command was issued", time.Since(restart).Round(100*time.Millisecond))

	// Zero writes by atoll to the members, and the HPAs keep their replicas,
	// over a few executor and status periods.
	time.Sleep(10 * time.Second)
	after := memberObjects(ctx, t)
	var diffs []string
	for k, v := range before {
		if strings.HasSuffix(k, "(for the log)") {
			continue
		}
		if after[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s -> %s", k, v, after[k]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("atoll wrote to the members after the control plane started again:\n%s", strings.Join(diffs, "\n"))
	}
	for _, m := range members {
		s, err := memberState(ctx, t, m)
		if err != nil {
			t.Fatal(err)
		}
		if s.replicas != 9 {
			t.Errorf("%s: %s after the restart, want the HPA's 9 (atoll must not reset it to the template's 1)", m, s)
		}
	}
	t.Logf("member objects 10s after the catch-up: %v", after)
}
