package dependencies

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/replicassyncer"
	"github.com/atoll-dev/atoll/pkg/interpreter"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// memberReplicas is spec.replicas of a Deployment in a member (-1 when it
// is not there).
func memberReplicas(ctx context.Context, t *testing.T, cluster, ns, name string) int32 {
	d, err := world.MemberClientset(t, cluster).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

// touch changes the template's annotations, so the executor applies it to
// members again.
func touch(ctx context.Context, t *testing.T, c client.Client, ns, name, value string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations["e2e.atoll.dev/touch"] = value
	if err := c.Patch(ctx, d, patch); err != nil {
		t.Fatalf("touching Deployment %s: %v", name, err)
	}
}

// TestMemberHPAOwnsReplicas: a Deployment and its HPA propagated together;
// the hpa-marker labels the template retain-replicas, the member HPA scales
// the member Deployment under load, and atoll never writes spec.replicas
// back, not even when the template changes and is applied again.
func TestMemberHPAOwnsReplicas(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	c := world.Client(t)
	ns := "hpa"
	app := "autoscaled"
	const templateReplicas = 2
	framework.CreateNamespace(t, c, ns)
	hpa := framework.HPA(app, ns, 5)
	framework.Create(t, c,
		deployment(ns, app).Replicas(templateReplicas).Obj(), hpa,
		utiltesting.MakePropagationPolicy(app, ns).ClusterNames("member1").
			Select("apps/v1", "Deployment", app).Select("autoscaling/v2", "HorizontalPodAutoscaler", app).Obj(),
	)

	framework.Eventually(t, time.Minute, "template marked retain-replicas by the hpa-marker", func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d); err != nil {
			return false, err.Error()
		}
		return d.Labels[interpreter.RetainReplicasLabel] == "true" && d.Annotations[workv1alpha2.RetainReplicasByHPAAnnotation] == "true",
			fmt.Sprintf("labels %v", d.Labels)
	})
	framework.Eventually(t, 90*time.Second, "HPA and Deployment in member1", func() (bool, string) {
		_, err := world.MemberClientset(t, "member1").AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, app, metav1.GetOptions{})
		r := memberReplicas(ctx, t, "member1", ns, app)
		return err == nil && r > 0, fmt.Sprintf("hpa err %v, replicas %d", err, r)
	})

	// 400m of load over pods requesting 200m at a 50% target: 4 replicas.
	world.Load(t, app, "400m")
	t.Cleanup(func() { world.Load(t, app, "0") })
	var scaled int32
	framework.Eventually(t, 3*time.Minute, "member1's HPA scales the Deployment up", func() (bool, string) {
		scaled = memberReplicas(ctx, t, "member1", ns, app)
		return scaled >= 3, fmt.Sprintf("spec.replicas %d", scaled)
	})
	t.Logf("member1's HPA scaled the Deployment to %d", scaled)

	// For 20 s, with the template changed (and so applied again) twice,
	// spec.replicas never goes back to the template's value, nor down.
	for i, end := 0, time.Now().Add(20*time.Second); time.Now().Before(end); i++ {
		if i == 4 || i == 20 {
			touch(ctx, t, c, ns, app, fmt.Sprint(i))
		}
		r := memberReplicas(ctx, t, "member1", ns, app)
		if r < scaled {
			t.Fatalf("member1 spec.replicas went from %d to %d (template says %d): atoll overwrote the HPA", scaled, r, templateReplicas)
		}
		scaled = r
		time.Sleep(500 * time.Millisecond)
	}
	framework.Eventually(t, time.Minute, "touched template applied to member1", func() (bool, string) {
		d, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Annotations["e2e.atoll.dev/touch"] == "20", fmt.Sprintf("annotations %v", d.Annotations)
	})
	if r := memberReplicas(ctx, t, "member1", ns, app); r < 3 {
		t.Errorf("member1 spec.replicas %d after the template was applied again, want the HPA's (>= 3)", r)
	}

	// Without the HPA the marker takes its label away again.
	if err := c.Delete(ctx, hpa); err != nil {
		t.Fatalf("deleting HPA: %v", err)
	}
	framework.Eventually(t, time.Minute, "retain-replicas label removed", func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d); err != nil {
			return false, err.Error()
		}
		_, labelled := d.Labels[interpreter.RetainReplicasLabel]
		_, annotated := d.Annotations[workv1alpha2.RetainReplicasByHPAAnnotation]
		return !labelled && !annotated, fmt.Sprintf("labels %v annotations %v", d.Labels, d.Annotations)
	})
}

// TestRetainReplicasAddedLater: a Deployment atoll has been applying with
// spec.replicas gets the retain-replicas label (an HPA appears, or the user
// labels it). The member keeps its replica count: the label only hands
// spec.replicas over, it must not reset it. (atoll was the only field manager
// of the member's spec.replicas; omitting the field from the next apply made
// the API server default it to 1. The executor now applies the live value.)
func TestRetainReplicasAddedLater(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	c := world.Client(t)
	ns := "retain-later"
	app := "later"
	framework.CreateNamespace(t, c, ns)
	framework.Create(t, c,
		deployment(ns, app).Replicas(3).Obj(),
		utiltesting.MakePropagationPolicy(app, ns).ClusterNames("member1").Select("apps/v1", "Deployment", app).Obj(),
	)
	framework.Eventually(t, 90*time.Second, "Deployment in member1 with 3 replicas", func() (bool, string) {
		r := memberReplicas(ctx, t, "member1", ns, app)
		return r == 3, fmt.Sprintf("spec.replicas %d", r)
	})

	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Labels[interpreter.RetainReplicasLabel] = "true"
	if err := c.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "labelled template applied to member1", func() (bool, string) {
		m, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return m.Labels[interpreter.RetainReplicasLabel] == "true", fmt.Sprintf("labels %v", m.Labels)
	})
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if r := memberReplicas(ctx, t, "member1", ns, app); r != 3 {
			var owners []string
			if m, err := world.MemberClientset(t, "member1").AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{}); err == nil {
				for _, f := range m.ManagedFields {
					owners = append(owners, fmt.Sprintf("%s/%s/%s", f.Manager, f.Operation, f.Subresource))
				}
			}
			t.Fatalf("member1 spec.replicas is %d after the retain-replicas label was added, want 3 (unchanged); field managers: %v", r, owners)
		}
	}
}

// templateReplicas is the template's spec.replicas (-1 when unreadable).
func templateReplicas(ctx context.Context, c client.Client, ns, name string) int32 {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil || d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

// TestTemplateReplicasFollowMembers: Karmada's deploymentReplicasSyncer. A
// Divided Deployment whose member HPAs own the replicas gets the members'
// sum as its spec.replicas: HPA 6..10 over 2:2 gives each member 3..5, the
// members scale from 2 to 3, and the template goes from 4 to 6 (event
// ReplicasSynced). A manual edit is taken back to what the members run;
// a Duplicated workload's template is never changed.
func TestTemplateReplicasFollowMembers(t *testing.T) {
	ctx := framework.Context(t, 6*time.Minute)
	c := world.Client(t)
	ns := "replicas-syncer"
	framework.CreateNamespace(t, c, ns)
	const divided, duplicated = "divided", "duplicated"
	hpa := framework.HPA(divided, ns, 10)
	hpa.Spec.MinReplicas = ptr.To[int32](6)
	dupHPA := framework.HPA(duplicated, ns, 10)
	dupHPA.Spec.MinReplicas = ptr.To[int32](3)
	weights := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 1},
		}},
	}
	policy := utiltesting.MakePropagationPolicy(divided, ns).ClusterNames("member1", "member2").
		Select("apps/v1", "Deployment", divided).Select("autoscaling/v2", "HorizontalPodAutoscaler", divided).Obj()
	policy.Spec.Placement.ReplicaScheduling = weights
	framework.Create(t, c,
		deployment(ns, divided).Replicas(4).Obj(), hpa, policy,
		deployment(ns, duplicated).Replicas(2).Obj(), dupHPA,
		utiltesting.MakePropagationPolicy(duplicated, ns).ClusterNames("member1", "member2").
			Select("apps/v1", "Deployment", duplicated).Select("autoscaling/v2", "HorizontalPodAutoscaler", duplicated).Obj(),
	)

	members := func(app string) string {
		return fmt.Sprintf("member1 %d, member2 %d", memberReplicas(ctx, t, "member1", ns, app), memberReplicas(ctx, t, "member2", ns, app))
	}
	framework.Eventually(t, 3*time.Minute, "member HPAs scale the Divided Deployment to 3:3 and the template follows to 6", func() (bool, string) {
		m, r := members(divided), templateReplicas(ctx, c, ns, divided)
		return m == "member1 3, member2 3" && r == 6, fmt.Sprintf("%s, template %d", m, r)
	})
	framework.Eventually(t, time.Minute, "ReplicasSynced event on the template", func() (bool, string) {
		reasons, err := framework.EventReasons(ctx, c, ns, divided)
		if err != nil {
			return false, err.Error()
		}
		_, ok := reasons[replicassyncer.ReasonReplicasSynced]
		return ok, fmt.Sprintf("reasons %v", reasons)
	})

	// A manual edit: the members keep what their HPAs run, and the
	// template is brought back to it.
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: divided}, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](10)
	if err := c.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the edit to 10 taken back to the members' 6", func() (bool, string) {
		// An event says the syncer saw the edit (10 -> 6), so the template
		// is not simply still at 6.
		notes, err := framework.EventMessages(ctx, c, ns, divided, replicassyncer.ReasonReplicasSynced)
		if err != nil {
			return false, err.Error()
		}
		m, r := members(divided), templateReplicas(ctx, c, ns, divided)
		return m == "member1 3, member2 3" && r == 6 && slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "10 -> 6") }),
			fmt.Sprintf("%s, template %d, events %q", m, r, notes)
	})

	framework.Eventually(t, 2*time.Minute, "member HPAs scale the Duplicated Deployment to 3 each", func() (bool, string) {
		m := members(duplicated)
		return m == "member1 3, member2 3", m
	})
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		if r := templateReplicas(ctx, c, ns, duplicated); r != 2 {
			t.Fatalf("Duplicated template spec.replicas %d, want 2 (per cluster, never synced)", r)
		}
	}
}
