package dependencies

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var members = []string{"member1", "member2"}

// deployment starts a Deployment whose pods (app=NAME) run container app,
// requesting 200m CPU.
func deployment(ns, name string) *utiltesting.DeploymentWrapper {
	return utiltesting.MakeDeployment(name, ns).Container("app", "nginx:1.27").Request(corev1.ResourceCPU, "200m")
}

func configMap(ns, name, value string) *corev1.ConfigMap {
	return utiltesting.MakeConfigMap(name, ns).Data("k", value).Obj()
}

func secret(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"k": "s3cr3t"}}
}

// where lists the members holding object kind/name (ConfigMap, Secret,
// ServiceAccount or Deployment) in ns; for a ConfigMap, value is its data["k"] there.
func where(ctx context.Context, t *testing.T, ns, kind, name string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range members {
		var value string
		var err error
		switch kind {
		case "ConfigMap":
			var cm *corev1.ConfigMap
			if cm, err = world.MemberClientset(t, m).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				value = cm.Data["k"]
			}
		case "Secret":
			_, err = world.MemberClientset(t, m).CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		case "ServiceAccount":
			_, err = world.MemberClientset(t, m).CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		case "Deployment":
			_, err = world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		}
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			out[m] = value
		}
	}
	return out, nil
}

// describeBinding summarises the binding of kind/name, for failure messages.
func describeBinding(ctx context.Context, t *testing.T, ns, kind, name string) string {
	b, err := framework.GetBinding(ctx, world.Client(t), ns, names.BindingName(kind, name))
	if err != nil {
		return "binding: " + err.Error()
	}
	var applied []string
	for _, a := range b.Status.AggregatedStatus {
		applied = append(applied, fmt.Sprintf("%s(applied=%v)", a.ClusterName, a.Applied))
	}
	return fmt.Sprintf("binding %s: labels %v, clusters %+v, requiredBy %+v, aggregatedStatus %v, deleting %v",
		b.Name, b.Labels, b.Spec.Clusters, b.Spec.RequiredBy, applied, b.DeletionTimestamp != nil)
}

// settled waits until the binding of kind/name has recorded in its status
// that it applied to exactly clusters. The executor withdraws only from
// clusters its persisted status lists (see "Dependencies" in
// docs/design/0003-propagation.md, open bug): moving a dependency before
// that can leave a copy behind, which is not what these tests are about.
func settled(ctx context.Context, t *testing.T, ns, kind, name string, clusters ...string) {
	t.Helper()
	framework.Eventually(t, time.Minute, fmt.Sprintf("binding of %s %s applied to %v", kind, name, clusters), func() (bool, string) {
		b, err := framework.GetBinding(ctx, world.Client(t), ns, names.BindingName(kind, name))
		if err != nil {
			return false, err.Error()
		}
		var applied []string
		for _, a := range b.Status.AggregatedStatus {
			if a.Applied {
				applied = append(applied, a.ClusterName)
			}
		}
		return fmt.Sprint(applied) == fmt.Sprint(clusters), describeBinding(ctx, t, ns, kind, name)
	})
}

// expect waits until kind/name is in exactly the clusters given (with
// data["k"] == value for ConfigMaps).
func expect(ctx context.Context, t *testing.T, ns, kind, name, value string, clusters ...string) {
	t.Helper()
	want := map[string]string{}
	for _, c := range clusters {
		want[c] = value
	}
	framework.Eventually(t, 90*time.Second, fmt.Sprintf("%s %s in exactly %v", kind, name, clusters), func() (bool, string) {
		got, err := where(ctx, t, ns, kind, name)
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("in %v; %s", got, describeBinding(ctx, t, ns, kind, name))
	})
}

// TestPropagateDeps: a Deployment's ConfigMap, Secret and ServiceAccount go
// exactly where it goes, move with it, follow content changes, and stay in
// a cluster as long as another workload there still requires them.
func TestPropagateDeps(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	c := world.Client(t)
	ns := "deps"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		configMap(ns, "shared", "v1"), secret(ns, "web-secret"),
		// A ConfigMap and Secret nobody refers to stay home.
		configMap(ns, "unused", "v1"), secret(ns, "unused"),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "web-robot", Namespace: ns}},
		deployment(ns, "web").EnvFromConfigMap("shared").SecretVolume("web-secret").ServiceAccount("web-robot").Obj(),
		utiltesting.MakePropagationPolicy("web", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "web").PropagateDeps().Obj(),
	)

	// 1. The dependencies go to member1 only, with the Deployment.
	expect(ctx, t, ns, "Deployment", "web", "", "member1")
	expect(ctx, t, ns, "ConfigMap", "shared", "v1", "member1")
	expect(ctx, t, ns, "Secret", "web-secret", "", "member1")
	expect(ctx, t, ns, "ServiceAccount", "web-robot", "", "member1")
	var attached workv1alpha2.ResourceBinding
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BindingName("ConfigMap", "shared")}, &attached); err != nil {
		t.Fatalf("attached binding of ConfigMap shared: %v", err)
	}
	if attached.Labels[workv1alpha2.AttachedLabel] != "true" || attached.Spec.Placement != nil ||
		len(attached.Spec.RequiredBy) != 1 || attached.Spec.RequiredBy[0].Name != names.BindingName("Deployment", "web") {
		t.Errorf("attached binding: labels %v, placement %v, requiredBy %+v", attached.Labels, attached.Spec.Placement, attached.Spec.RequiredBy)
	}

	// 2. A change of the ConfigMap reaches the member.
	framework.Update(t, c, utiltesting.MakeConfigMap("shared", ns).Obj(), func(cm *corev1.ConfigMap) { cm.Data["k"] = "v2" })
	expect(ctx, t, ns, "ConfigMap", "shared", "v2", "member1")

	// 3. The policy moves the Deployment to member2: its dependencies move
	// with it.
	for _, d := range [][2]string{{"ConfigMap", "shared"}, {"Secret", "web-secret"}, {"ServiceAccount", "web-robot"}} {
		settled(ctx, t, ns, d[0], d[1], "member1")
	}
	framework.Update(t, c, utiltesting.MakePropagationPolicy("web", ns).Obj(), func(pp *policyv1alpha1.PropagationPolicy) {
		pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
	})
	expect(ctx, t, ns, "Deployment", "web", "", "member2")
	expect(ctx, t, ns, "ConfigMap", "shared", "v2", "member2")
	expect(ctx, t, ns, "Secret", "web-secret", "", "member2")
	expect(ctx, t, ns, "ServiceAccount", "web-robot", "", "member2")

	// 4. A second Deployment in member1 requires the shared ConfigMap and
	// one created after it.
	framework.Create(t, c,
		deployment(ns, "api").EnvFromConfigMap("shared").EnvFromConfigMap("late").Obj(),
		utiltesting.MakePropagationPolicy("api", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "api").PropagateDeps().Obj(),
	)
	expect(ctx, t, ns, "Deployment", "api", "", "member1")
	expect(ctx, t, ns, "ConfigMap", "shared", "v2", "member1", "member2")
	framework.Create(t, c, configMap(ns, "late", "v1"))
	expect(ctx, t, ns, "ConfigMap", "late", "v1", "member1")
	settled(ctx, t, ns, "ConfigMap", "shared", "member1", "member2")

	// 5. The first Deployment leaves: its Secret goes with it, the shared
	// ConfigMap leaves member2 but stays in member1, where api requires it.
	if err := c.Delete(ctx, deployment(ns, "web").Obj()); err != nil {
		t.Fatalf("deleting Deployment web: %v", err)
	}
	expect(ctx, t, ns, "Deployment", "web", "")
	expect(ctx, t, ns, "Secret", "web-secret", "")
	expect(ctx, t, ns, "ServiceAccount", "web-robot", "")
	expect(ctx, t, ns, "ConfigMap", "shared", "v2", "member1")
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		got, err := where(ctx, t, ns, "ConfigMap", "shared")
		if err == nil && fmt.Sprint(got) != fmt.Sprint(map[string]string{"member1": "v2"}) {
			t.Fatalf("ConfigMap shared is in %v, want member1 only while api requires it", got)
		}
	}
	for _, name := range []string{"unused"} {
		expect(ctx, t, ns, "ConfigMap", name, "v1")
		expect(ctx, t, ns, "Secret", name, "")
	}

	// 6. The last requirer leaves: so do the dependencies and their
	// attached bindings.
	if err := c.Delete(ctx, deployment(ns, "api").Obj()); err != nil {
		t.Fatalf("deleting Deployment api: %v", err)
	}
	expect(ctx, t, ns, "ConfigMap", "shared", "v2")
	expect(ctx, t, ns, "ConfigMap", "late", "v1")
	framework.Eventually(t, time.Minute, "attached bindings deleted", func() (bool, string) {
		var list workv1alpha2.ResourceBindingList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{workv1alpha2.AttachedLabel: "true"}); err != nil {
			return false, err.Error()
		}
		var left []string
		for _, b := range list.Items {
			left = append(left, b.Name)
		}
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestDependencyWithOwnPolicy: a ConfigMap its own policy propagates is
// not attached to the workload requiring it: it goes where its policy says.
func TestDependencyWithOwnPolicy(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "deps-own"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		utiltesting.MakePropagationPolicy("own", ns).ClusterNames("member2").Select("v1", "ConfigMap", "own").Obj(),
		configMap(ns, "own", "v1"),
	)
	expect(ctx, t, ns, "ConfigMap", "own", "v1", "member2")
	framework.Create(t, c,
		deployment(ns, "user").EnvFromConfigMap("own").Obj(),
		utiltesting.MakePropagationPolicy("user", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "user").PropagateDeps().Obj(),
	)
	expect(ctx, t, ns, "Deployment", "user", "", "member1")
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		got, err := where(ctx, t, ns, "ConfigMap", "own")
		if err == nil && fmt.Sprint(got) != fmt.Sprint(map[string]string{"member2": "v1"}) {
			t.Fatalf("ConfigMap own is in %v, want member2 only (its own policy)", got)
		}
	}
	var b workv1alpha2.ResourceBinding
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BindingName("ConfigMap", "own")}, &b); err != nil {
		t.Fatal(err)
	}
	if b.Labels[workv1alpha2.AttachedLabel] != "" || len(b.Spec.RequiredBy) != 0 {
		t.Errorf("the ConfigMap's own binding was attached: labels %v, requiredBy %+v", b.Labels, b.Spec.RequiredBy)
	}

	// The other order: an attached dependency that a policy claims later
	// goes where the policy says; released by the policy, it follows its
	// workload again.
	framework.Create(t, c,
		configMap(ns, "adopted", "v1"),
		deployment(ns, "user2").EnvFromConfigMap("adopted").Obj(),
		utiltesting.MakePropagationPolicy("user2", ns).ClusterNames("member1").Select("apps/v1", "Deployment", "user2").PropagateDeps().Obj(),
	)
	expect(ctx, t, ns, "ConfigMap", "adopted", "v1", "member1")
	settled(ctx, t, ns, "ConfigMap", "adopted", "member1")
	own := utiltesting.MakePropagationPolicy("adopted", ns).ClusterNames("member2").Select("v1", "ConfigMap", "adopted").Obj()
	framework.Create(t, c, own)
	expect(ctx, t, ns, "ConfigMap", "adopted", "v1", "member2")
	if err := c.Delete(ctx, own); err != nil {
		t.Fatalf("deleting policy adopted: %v", err)
	}
	expect(ctx, t, ns, "ConfigMap", "adopted", "v1", "member1")
}

// TestPropagateDepsTurnedOff: when the workload's policy stops propagating
// dependencies, they are withdrawn while the workload stays; turned on
// again, they come back.
func TestPropagateDepsTurnedOff(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "deps-off"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		configMap(ns, "solo-config", "v1"),
		deployment(ns, "solo").EnvFromConfigMap("solo-config").Obj(),
		utiltesting.MakePropagationPolicy("solo", ns).ClusterNames("member2").Select("apps/v1", "Deployment", "solo").PropagateDeps().Obj(),
	)
	expect(ctx, t, ns, "Deployment", "solo", "", "member2")
	expect(ctx, t, ns, "ConfigMap", "solo-config", "v1", "member2")

	setPropagateDeps := func(on bool) {
		t.Helper()
		framework.Update(t, c, utiltesting.MakePropagationPolicy("solo", ns).Obj(), func(pp *policyv1alpha1.PropagationPolicy) {
			pp.Spec.PropagateDeps = on
		})
	}
	setPropagateDeps(false)
	expect(ctx, t, ns, "ConfigMap", "solo-config", "v1")
	expect(ctx, t, ns, "Deployment", "solo", "", "member2")
	setPropagateDeps(true)
	expect(ctx, t, ns, "ConfigMap", "solo-config", "v1", "member2")
}
