package overrides

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/overridemanager"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

var members = []string{"member1", "member2"}

// nginx is a Deployment name whose pods run container nginx.
func nginx(ns, name string) *appsv1.Deployment {
	return utiltesting.MakeDeployment(name, ns).Container("nginx", "nginx:1.27").Obj()
}

// propagate places the selected templates on every member.
func propagate(ns, name string) *utiltesting.PropagationPolicyWrapper {
	return utiltesting.MakePropagationPolicy(name, ns).ClusterNames(members...)
}

func only(cluster string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}
}

func raw(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

const configJSON = `{"db":{"host":"db","port":5432}}`

// TestOverridersPerCluster: each overrider changes exactly what it should in
// exactly the clusters it targets; deleting a policy rewrites only the
// objects it changed.
func TestOverridersPerCluster(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "ovr"
	framework.CreateNamespace(t, c, ns)
	deployOverrides := utiltesting.MakeOverridePolicy("deploy-overrides", ns).Select("apps/v1", "Deployment", "web").
		Rule(only("member1"), policyv1alpha1.Overriders{
			ImageOverrider:   []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.example.io"}},
			CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"nginx"}}},
			ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"-g", "daemon off;"}}},
		}).
		Rule(only("member2"), policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": "edge"}}},
			Plaintext:       []policyv1alpha1.PlaintextOverrider{{Path: "/spec/minReadySeconds", Operator: policyv1alpha1.OverriderOpAdd, Value: raw("5")}},
		}).Obj()
	cmOverrides := utiltesting.MakeOverridePolicy("cm-overrides", ns).Select("v1", "ConfigMap", "cfg").
		Rule(only("member1"), policyv1alpha1.Overriders{
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"note": "one"}}},
		}).
		Rule(only("member2"), policyv1alpha1.Overriders{
			FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
				{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"db-2"`)},
			}}},
		}).Obj()
	framework.Create(t, c, deployOverrides, cmOverrides,
		nginx(ns, "web"),
		utiltesting.MakeConfigMap("cfg", ns).Data("config.json", configJSON).Obj(),
		propagate(ns, "all").Select("apps/v1", "Deployment", "web").Select("v1", "ConfigMap", "cfg").Obj())

	type want struct {
		image, command, args, tier, note, config, appliedOverrides string
		minReadySeconds                                            int32
	}
	wants := map[string]want{
		"member1": {image: "mirror.example.io/nginx:1.27", command: "nginx", args: "-g|daemon off;", config: configJSON, note: "one",
			appliedOverrides: "deploy-overrides"},
		"member2": {image: "nginx:1.27", tier: "edge", minReadySeconds: 5, config: `{"db":{"host":"db-2","port":5432}}`,
			appliedOverrides: "deploy-overrides"},
	}
	observe := func(m string) (want, string, string, error) {
		cs := world.MemberClientset(t, m)
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return want{}, "", "", err
		}
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil {
			return want{}, "", "", err
		}
		ctr := d.Spec.Template.Spec.Containers[0]
		return want{
			image: ctr.Image, command: strings.Join(ctr.Command, "|"), args: strings.Join(ctr.Args, "|"),
			tier: d.Labels["tier"], note: cm.Annotations["note"], config: cm.Data["config.json"],
			appliedOverrides: d.Annotations[overridemanager.AppliedOverridesAnnotation], minReadySeconds: d.Spec.MinReadySeconds,
		}, fmt.Sprintf("generation %d hash %s", d.Generation, d.Annotations[workv1alpha2.ManifestHashAnnotation]), cm.ResourceVersion, nil
	}
	deployRV := map[string]string{}
	for _, m := range members {
		framework.Eventually(t, 90*time.Second, "overridden Deployment and ConfigMap in "+m, func() (bool, string) {
			got, drv, _, err := observe(m)
			if err != nil {
				return false, err.Error()
			}
			deployRV[m] = drv
			return got == wants[m], fmt.Sprintf("got %+v, want %+v", got, wants[m])
		})
	}
	// The template itself is untouched.
	var tmpl appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	if img := tmpl.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("template image changed to %q", img)
	}

	// Deleting the ConfigMap policy restores the ConfigMaps and leaves the
	// Deployments alone.
	if err := c.Delete(ctx, cmOverrides); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		framework.Eventually(t, 60*time.Second, "ConfigMap in "+m+" back to the template", func() (bool, string) {
			got, _, _, err := observe(m)
			if err != nil {
				return false, err.Error()
			}
			return got.note == "" && got.config == configJSON, fmt.Sprintf("note=%q config=%s", got.note, got.config)
		})
	}
	// The member's own controllers update the Deployments' status; atoll
	// rewriting them would change their generation and manifest hash.
	time.Sleep(2 * time.Second) // let any stray rewrite land before checking
	for _, m := range members {
		_, drv, _, err := observe(m)
		if err != nil {
			t.Fatal(err)
		}
		if drv != deployRV[m] {
			t.Errorf("Deployment in %s was rewritten (%s → %s) by a change to a ConfigMap policy", m, deployRV[m], drv)
		}
	}
}

// TestNamespacedPolicyWinsOverClusterPolicy: a ClusterOverridePolicy and an
// OverridePolicy set the same label; the OverridePolicy is applied after it
// and wins, even though the cluster policy's selector is more specific.
func TestNamespacedPolicyWinsOverClusterPolicy(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "order"
	framework.CreateNamespace(t, c, ns)
	setTier := func(v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": v}}}}
	}
	clusterPolicy := utiltesting.MakeOverridePolicy("order-cluster", "").
		Selector(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}).
		Rule(nil, setTier("cluster")).ClusterObj()
	framework.Create(t, c,
		clusterPolicy,
		utiltesting.MakeOverridePolicy("order-ns", ns).Select("apps/v1", "Deployment", "").Rule(nil, setTier("namespaced")).Obj(),
		nginx(ns, "web"),
		propagate(ns, "web").Select("apps/v1", "Deployment", "web").Obj())
	framework.DeleteOnCleanup(t, c, clusterPolicy)
	for _, m := range members {
		framework.Eventually(t, 90*time.Second, "namespaced label in "+m, func() (bool, string) {
			d, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			a := d.Annotations
			return d.Labels["tier"] == "namespaced" && a[overridemanager.AppliedClusterOverridesAnnotation] == "order-cluster" &&
					a[overridemanager.AppliedOverridesAnnotation] == "order-ns",
				fmt.Sprintf("tier=%q annotations=%v", d.Labels["tier"], a)
		})
	}
}

// TestBrokenOverrideFailsOnlyItsCluster: a plaintext patch on a missing path
// for member1 marks member1 applied=false with the policy and path; member2
// is fine. Fixing the policy heals member1.
func TestBrokenOverrideFailsOnlyItsCluster(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "broken"
	framework.CreateNamespace(t, c, ns)
	op := utiltesting.MakeOverridePolicy("nginx-overrides", ns).Rule(only("member1"), policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas2", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("3")}}}).Obj()
	framework.Create(t, c, op, nginx(ns, "web"), propagate(ns, "web").Select("apps/v1", "Deployment", "web").Obj())
	framework.Eventually(t, 90*time.Second, "member1 failed naming the policy and path, member2 applied", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "web"))
		if err != nil {
			return false, err.Error()
		}
		m1, m2 := framework.AggregatedStatusOf(rb, "member1"), framework.AggregatedStatusOf(rb, "member2")
		if m1 == nil || m2 == nil {
			return false, fmt.Sprintf("aggregatedStatus %+v", rb.Status.AggregatedStatus)
		}
		wantMsg := "OverridePolicy broken/nginx-overrides: plaintext replace /spec/replicas2: path not found"
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.FullyApplied)
		condOK := cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, wantMsg)
		return !m1.Applied && strings.Contains(m1.AppliedMessage, wantMsg) && m2.Applied && condOK,
			fmt.Sprintf("member1 %v %q, member2 %v %q, FullyApplied %+v", m1.Applied, m1.AppliedMessage, m2.Applied, m2.AppliedMessage, cond)
	})
	if _, err := world.MemberClientset(t, "member2").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("member2 Deployment: %v", err)
	}
	if _, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Errorf("member1 has the Deployment although its overrides failed")
	}

	// Fix the path: member1 gets 3 replicas, member2 keeps 1.
	framework.Update(t, c, op, func(op *policyv1alpha1.OverridePolicy) {
		op.Spec.OverrideRules[0].Overriders.Plaintext[0].Path = "/spec/replicas"
	})
	framework.Eventually(t, 60*time.Second, "member1 3 replicas, member2 1, binding fully applied", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("Deployment", "web"))
		if err != nil {
			return false, err.Error()
		}
		var got []int32
		for _, m := range members {
			d, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			got = append(got, ptr.Deref(d.Spec.Replicas, 0))
		}
		applied := framework.AggregatedStatusOf(rb, "member1") != nil && framework.AggregatedStatusOf(rb, "member1").Applied
		return slices.Equal(got, []int32{3, 1}) && applied, fmt.Sprintf("replicas %v, member1 applied %v", got, applied)
	})
}

// TestConflictResolution: a ConfigMap that already exists in member1 and is
// not atoll's is left alone under Abort and taken over under Overwrite (by
// the policy or by the template's work.karmada.io/conflict-resolution
// annotation); the binding status says which.
func TestConflictResolution(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "conflict"
	framework.CreateNamespace(t, c, ns)
	m1 := world.MemberClientset(t, "member1")
	if _, err := m1.CoreV1().Namespaces().Create(ctx, utiltesting.MakeNamespace(ns).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := func(name, value string, annotations map[string]string) *corev1.ConfigMap {
		return utiltesting.MakeConfigMap(name, ns).Annotations(annotations).Data("k", value).Obj()
	}
	for _, name := range []string{"abort", "overwrite", "annotated"} {
		if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, cm(name, "member", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	abort := propagate(ns, "abort").Select("v1", "ConfigMap", "abort").Select("v1", "ConfigMap", "annotated").Obj()
	overwrite := propagate(ns, "overwrite").Select("v1", "ConfigMap", "overwrite").ConflictResolution(policyv1alpha1.ConflictOverwrite).Obj()
	framework.Create(t, c, abort, overwrite,
		cm("abort", "template", nil), cm("overwrite", "template", nil),
		cm("annotated", "template", map[string]string{"work.karmada.io/conflict-resolution": "overwrite"}))

	cases := map[string]struct {
		wantValue   string
		wantApplied bool
		wantMsg     string
	}{
		"abort":     {wantValue: "member", wantMsg: "ConfigMap conflict/abort already exists in cluster member1 and is not managed by atoll"},
		"overwrite": {wantValue: "template", wantApplied: true, wantMsg: "took over existing ConfigMap conflict/overwrite in cluster member1"},
		"annotated": {wantValue: "template", wantApplied: true, wantMsg: "took over existing ConfigMap conflict/annotated in cluster member1"},
	}
	for name, tc := range cases {
		framework.Eventually(t, 60*time.Second, name+": member1 status and content", func() (bool, string) {
			rb, err := framework.GetBinding(ctx, c, ns, names.BindingName("ConfigMap", name))
			if err != nil {
				return false, err.Error()
			}
			it := framework.AggregatedStatusOf(rb, "member1")
			if it == nil {
				return false, "no member1 status yet"
			}
			got, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			m2 := framework.AggregatedStatusOf(rb, "member2")
			return got.Data["k"] == tc.wantValue && it.Applied == tc.wantApplied && strings.Contains(it.AppliedMessage, tc.wantMsg) && m2 != nil && m2.Applied,
				fmt.Sprintf("value=%q applied=%v message=%q member2=%+v", got.Data["k"], it.Applied, it.AppliedMessage, m2)
		})
	}
	// Abort never labels the member's object as atoll's.
	got, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "abort", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[workv1alpha2.ManagedLabel] != "" {
		t.Errorf("Abort labelled the existing ConfigMap: %v", got.Labels)
	}
}

// TestTargetClusterFollowsClusterLabels: a rule selecting clusters by label
// applies to a cluster once it gets the label and stops when it loses it.
// (Other events, such as member status churn, also re-sync the binding, so
// this checks the behaviour, not the executor's Cluster watch alone; that
// watch's filter has a unit test.)
func TestTargetClusterFollowsClusterLabels(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	ns := "bylabel"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		utiltesting.MakeOverridePolicy("canary", ns).Rule(
			&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ovr-canary": "true"}}},
			policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "1.28-canary"}}}).Obj(),
		nginx(ns, "web"), propagate(ns, "web").Select("apps/v1", "Deployment", "web").Obj())
	images := func() (string, error) {
		var out []string
		for _, m := range members {
			d, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			out = append(out, d.Spec.Template.Spec.Containers[0].Image)
		}
		return strings.Join(out, " "), nil
	}
	expect := func(want string) {
		t.Helper()
		framework.Eventually(t, 60*time.Second, "images "+want, func() (bool, string) {
			got, err := images()
			if err != nil {
				return false, err.Error()
			}
			return got == want, got
		})
	}
	label := func(value *string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"labels":{"ovr-canary":%s}}}`, "null")
		if value != nil {
			patch = fmt.Sprintf(`{"metadata":{"labels":{"ovr-canary":%q}}}`, *value)
		}
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
		if err := c.Patch(ctx, cl, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
		_ = c.Patch(context.Background(), cl, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"ovr-canary":null}}}`)))
	})
	expect("nginx:1.27 nginx:1.27")
	label(ptr.To("true"))
	expect("nginx:1.27 nginx:1.28-canary")
	label(nil)
	expect("nginx:1.27 nginx:1.27")
}
