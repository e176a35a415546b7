package tenancy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// writerRole lets its subjects write every Karmada policy kind and
// Deployments anywhere: the tenant boundary, not RBAC, is what refuses.
const writerRole = "tenancy-e2e-writer"

var (
	setupOnce sync.Once
	teamA     client.Client // ServiceAccount team-a/dev, tenant team-a
	teamB     client.Client // ServiceAccount team-b/dev, tenant team-b
)

// teams creates, once for the package, the namespaces, the writer role, the
// tenants and their identities, and waits until both tenants resolved
// their cluster sets.
func teams(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		admin := world.Client(t)
		for _, ns := range []string{"team-a", "team-b", "shared", "ops"} {
			framework.CreateNamespace(t, admin, ns)
		}
		framework.Create(t, admin,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: writerRole}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"policy.karmada.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
			}},
			utiltesting.MakeTenant("team-a").ServiceAccount("team-a", "dev").Group("team-a-developers").Namespaces("team-a", "shared").
				ClusterNames("member1").Labels(map[string]string{"team": "a"}).Obj(),
			utiltesting.MakeTenant("team-b").ServiceAccount("team-b", "dev").Namespaces("team-b", "shared").
				ClusterNames("member2").Labels(map[string]string{"team": "b"}).Obj(),
		)
		teamA = world.ServiceAccountClient(t, "team-a", "dev", writerRole)
		teamB = world.ServiceAccountClient(t, "team-b", "dev", writerRole)
		for tenant, cluster := range map[string]string{"team-a": "member1", "team-b": "member2"} {
			waitTenant(t, tenant, func(tn *tenancyv1alpha1.Tenant) bool {
				return strings.Join(tn.Status.Clusters, ",") == cluster && meta.IsStatusConditionTrue(tn.Status.Conditions, tenancyv1alpha1.ConditionReady)
			})
		}
	})
	if teamA == nil || teamB == nil {
		t.Fatal("the tenants were not set up (see the first test's failure)")
	}
}

func waitTenant(t *testing.T, name string, ok func(*tenancyv1alpha1.Tenant) bool) *tenancyv1alpha1.Tenant {
	t.Helper()
	var tn tenancyv1alpha1.Tenant
	framework.Eventually(t, time.Minute, "tenant "+name+" resolved", func() (bool, string) {
		if err := world.Client(t).Get(context.Background(), client.ObjectKey{Name: name}, &tn); err != nil {
			return false, err.Error()
		}
		return ok(&tn), fmt.Sprintf("status %+v", tn.Status)
	})
	return &tn
}

// refused asserts that creating obj as c is forbidden with a message
// containing every one of want.
func refused(t *testing.T, c client.Client, obj client.Object, want ...string) {
	t.Helper()
	err := c.Create(context.Background(), obj)
	if err == nil {
		t.Fatalf("creating %T %s was allowed; want it refused", obj, client.ObjectKeyFromObject(obj))
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("creating %s: got %v, want Forbidden", client.ObjectKeyFromObject(obj), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("creating %s: message %q does not say %q", client.ObjectKeyFromObject(obj), err.Error(), w)
		}
	}
}

func matchAll() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "no-such-label", Operator: metav1.LabelSelectorOpDoesNotExist}}}
}

// TestRefusedAtAdmission: what steps outside team-a's room is refused by
// the API server with a message naming the tenant and the rule; what stays
// inside is admitted and recorded as team-a's.
func TestRefusedAtAdmission(t *testing.T) {
	teams(t)
	dep := func(name string) *utiltesting.PropagationPolicyWrapper {
		return utiltesting.MakePropagationPolicy(name, "team-a").Select("apps/v1", "Deployment", "web")
	}
	refused(t, teamA, dep("to-member2").ClusterNames("member1", "member2").Obj(),
		"tenant team-a", "clusterNames: cluster(s) member2 outside the tenant's cluster set (member1)")
	refused(t, teamA, dep("term-member2").Placement(utiltesting.MakePlacement().
		AffinityTerm("mine", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}).
		AffinityTerm("theirs", policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}).Obj()).Obj(),
		"tenant team-a", "term(s) theirs name clusters outside")
	refused(t, teamA, utiltesting.MakePropagationPolicy("everything", "").Select("apps/v1", "Deployment", "").ClusterObj(),
		"tenant team-a", "ClusterPropagationPolicy is for platform admins")
	refused(t, teamA, utiltesting.MakeOverridePolicy("everything", "").Select("apps/v1", "Deployment", "").ClusterObj(),
		"tenant team-a", "ClusterOverridePolicy is for platform admins")
	// A member through the tenant's Group, with a certificate from the
	// control plane's CA: the same rules.
	carol := world.CertificateClient(t, "carol", []string{"team-a-developers"}, writerRole)
	refused(t, carol, utiltesting.MakePropagationPolicy("carols", "team-b").Select("apps/v1", "Deployment", "web").ClusterNames("member2").Obj(),
		"tenant team-a", "namespace team-b is not the tenant's")
	refused(t, teamA, utiltesting.MakePropagationPolicy("theirs", "team-b").Select("apps/v1", "Deployment", "web").ClusterNames("member1").Obj(),
		"tenant team-a", "namespace team-b is not the tenant's")
	refused(t, teamA, utiltesting.MakePropagationPolicy("their-labels", "shared").SelectLabels("apps/v1", "Deployment", map[string]string{"team": "b"}).ClusterNames("member1").Obj(),
		"tenant team-a", "namespace shared is shared with other tenants", "(team=a)")
	refused(t, teamA, utiltesting.MakePropagationPolicy("by-name", "shared").Select("apps/v1", "Deployment", "b-web").ClusterNames("member1").Obj(),
		"tenant team-a", "without name")
	refused(t, teamA, utiltesting.MakeOverridePolicy("everything", "shared").
		Rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"x": "y"}}},
		}).Obj(),
		"tenant team-a", "namespace shared is shared")
	refused(t, teamA, utiltesting.MakeOverridePolicy("on-member2", "team-a").Select("apps/v1", "Deployment", "web").
		Rule(&policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"x": "y"}}},
		}).Obj(),
		"tenant team-a", "targetCluster.clusterNames name clusters outside the tenant's cluster set (member1)")

	// Inside the room: admitted, and recorded as team-a's whatever the
	// request claimed.
	ctx := context.Background()
	mine := utiltesting.MakePropagationPolicy("mine", "shared").
		SelectLabels("apps/v1", "Deployment", map[string]string{"team": "a", "tier": "web"}).ClusterNames("member1").Obj()
	mine.Annotations = map[string]string{tenancyv1alpha1.TenantAnnotation: "team-b", tenancyv1alpha1.CreatorAnnotation: "someone-else"}
	if err := teamA.Create(ctx, mine); err != nil {
		t.Fatalf("team-a's own policy in the shared namespace was refused: %v", err)
	}
	if got := mine.Annotations; got[tenancyv1alpha1.TenantAnnotation] != "team-a" || got[tenancyv1alpha1.CreatorAnnotation] != "system:serviceaccount:team-a:dev" {
		t.Errorf("recorded annotations %v, want tenant team-a and creator system:serviceaccount:team-a:dev", got)
	}
	// An edit cannot move it to another tenant (the detector labels the
	// policy meanwhile, hence the re-reading Update).
	framework.Update(t, teamA, mine, func(p *policyv1alpha1.PropagationPolicy) {
		p.Annotations[tenancyv1alpha1.TenantAnnotation] = "team-b"
	})
	if got := mine.Annotations[tenancyv1alpha1.TenantAnnotation]; got != "team-a" {
		t.Errorf("after team-a's edit the policy is tenant %q's, want team-a's", got)
	}

	// Another tenant's policy, even in the shared namespace, is not
	// team-a's to change or delete.
	theirs := utiltesting.MakePropagationPolicy("theirs", "shared").
		SelectLabels("apps/v1", "Deployment", map[string]string{"team": "b"}).ClusterNames("member2").Obj()
	if err := teamB.Create(ctx, theirs); err != nil {
		t.Fatalf("team-b's policy was refused: %v", err)
	}
	var err error
	framework.Eventually(t, 10*time.Second, "team-a's edit of team-b's policy answered (not a conflict)", func() (bool, string) {
		if err = teamB.Get(ctx, client.ObjectKeyFromObject(theirs), theirs); err != nil {
			return false, err.Error()
		}
		theirs.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member1"}
		err = teamA.Update(ctx, theirs)
		return !apierrors.IsConflict(err), fmt.Sprint(err)
	})
	if !apierrors.IsForbidden(err) || !strings.Contains(fmt.Sprint(err), "belongs to tenant team-b") {
		t.Errorf("team-a editing team-b's policy: got %v, want Forbidden: belongs to tenant team-b", err)
	}
	if err := teamA.Delete(ctx, theirs); !apierrors.IsForbidden(err) || !strings.Contains(fmt.Sprint(err), "belongs to tenant team-b") {
		t.Errorf("team-a deleting team-b's policy: got %v, want Forbidden", err)
	}
	for _, o := range []client.Object{mine, theirs} {
		if err := world.Client(t).Delete(ctx, o); err != nil {
			t.Errorf("the admin could not delete %s: %v", o.GetName(), err)
		}
	}
}

// binding waits for the ResourceBinding of Deployment ns/name to be
// scheduled and returns it.
func binding(t *testing.T, ns, name string) *workv1alpha2.ResourceBinding {
	t.Helper()
	var rb *workv1alpha2.ResourceBinding
	framework.Eventually(t, time.Minute, "binding of "+ns+"/"+name+" scheduled", func() (bool, string) {
		var err error
		if rb, err = framework.GetBinding(context.Background(), world.Client(t), ns, names.BindingName("Deployment", name)); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		return c != nil && c.ObservedGeneration == rb.Generation, fmt.Sprintf("conditions %v", rb.Status.Conditions)
	})
	return rb
}

// onMembers polls until Deployment ns/name exists exactly on want.
func onMembers(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, fmt.Sprintf("%s/%s on exactly %v", ns, name, want), func() (bool, string) {
		var got []string
		for _, m := range []string{"member1", "member2"} {
			_, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err == nil {
				got = append(got, m)
			} else if !apierrors.IsNotFound(err) {
				return false, err.Error()
			}
		}
		return strings.Join(got, ",") == strings.Join(want, ","), fmt.Sprintf("on %v", got)
	})
}

// TestPlacementHeldToClusterSet: a team-a policy whose label affinity
// matches every cluster places only on member1, and the binding says why;
// the same policy of a platform admin in an untenanted namespace reaches
// both members. A policy that names member2 in team-a's namespace without
// going through team-a (an admin's, or one written while admission was off)
// still never reaches member2.
func TestPlacementHeldToClusterSet(t *testing.T) {
	teams(t)
	admin := world.Client(t)
	framework.Create(t, teamA,
		utiltesting.MakeDeployment("web", "team-a").Obj(),
		utiltesting.MakePropagationPolicy("web", "team-a").Select("apps/v1", "Deployment", "web").
			Placement(utiltesting.MakePlacement().LabelSelector(matchAll()).Obj()).Obj())
	framework.Create(t, admin,
		utiltesting.MakeDeployment("web", "ops").Obj(),
		utiltesting.MakePropagationPolicy("web", "ops").Select("apps/v1", "Deployment", "web").
			Placement(utiltesting.MakePlacement().LabelSelector(matchAll()).Obj()).Obj())

	onMembers(t, "team-a", "web", "member1")
	onMembers(t, "ops", "web", "member1", "member2")
	rb := binding(t, "team-a", "web")
	if c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled); c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "Tenant team-a's cluster set keeps it off member2") {
		t.Errorf("Scheduled condition %s %q, want True saying the tenant's cluster set keeps it off member2", c.Status, c.Message)
	}
	framework.Consistently(t, 5*time.Second, "team-a's web stays off member2", func() (bool, string) {
		_, err := world.MemberClientset(t, "member2").AppsV1().Deployments("team-a").Get(context.Background(), "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	// Not through team-a: admitted, but held to the tenant all the same.
	framework.Create(t, admin,
		utiltesting.MakeDeployment("api", "team-a").Obj(),
		utiltesting.MakePropagationPolicy("api", "team-a").Select("apps/v1", "Deployment", "api").ClusterNames("member2").Obj())
	framework.Eventually(t, time.Minute, "team-a/api unschedulable for the tenant", func() (bool, string) {
		rb := binding(t, "team-a", "api")
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "outside tenant team-a's cluster set"), c.Message
	})
	onMembers(t, "team-a", "api")
}

// TestSharedNamespaceHeldInDepth: in the shared namespace each team's
// policies reach only its labelled templates. An OverridePolicy and a
// PropagationPolicy recorded as team-a's but written around admission (by an
// admin here, as one written while the check was off would be) never
// change or claim team-b's Deployment, while the override does apply to
// team-a's own.
func TestSharedNamespaceHeldInDepth(t *testing.T) {
	teams(t)
	ctx := context.Background()
	admin := world.Client(t)
	framework.Create(t, admin,
		utiltesting.MakeDeployment("a-web", "shared").Label("team", "a").Obj(),
		utiltesting.MakeDeployment("b-web", "shared").Label("team", "b").Obj())
	framework.Create(t, teamA, utiltesting.MakePropagationPolicy("a-apps", "shared").
		SelectLabels("apps/v1", "Deployment", map[string]string{"team": "a"}).ClusterNames("member1").Obj())
	framework.Create(t, teamB, utiltesting.MakePropagationPolicy("b-apps", "shared").
		SelectLabels("apps/v1", "Deployment", map[string]string{"team": "b"}).ClusterNames("member2").Obj())
	onMembers(t, "shared", "a-web", "member1")
	onMembers(t, "shared", "b-web", "member2")

	asTeamA := map[string]string{tenancyv1alpha1.TenantAnnotation: "team-a"}
	everything := utiltesting.MakeOverridePolicy("a-everything", "shared").
		Rule(nil, policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"touched": "by-a"}}},
		}).Obj()
	everything.Annotations = asTeamA
	grab := utiltesting.MakePropagationPolicy("a-grab", "shared").Select("apps/v1", "Deployment", "b-web").
		ClusterNames("member1", "member2").Priority(100).Obj()
	grab.Annotations = asTeamA
	framework.Create(t, admin, everything, grab)

	framework.Eventually(t, time.Minute, "team-a's override on its own Deployment", func() (bool, string) {
		d, err := world.MemberClientset(t, "member1").AppsV1().Deployments("shared").Get(ctx, "a-web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Labels["touched"] == "by-a", fmt.Sprintf("labels %v", d.Labels)
	})
	framework.Consistently(t, 10*time.Second, "team-b's Deployment untouched and unclaimed by team-a", func() (bool, string) {
		d, err := world.MemberClientset(t, "member2").AppsV1().Deployments("shared").Get(ctx, "b-web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if _, touched := d.Labels["touched"]; touched {
			return false, fmt.Sprintf("member2's b-web labels %v", d.Labels)
		}
		rb, err := framework.GetBinding(ctx, admin, "shared", names.BindingName("Deployment", "b-web"))
		if err != nil {
			return false, err.Error()
		}
		if p := rb.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; p != "b-apps" {
			return false, "b-web claimed by " + p
		}
		_, err = world.MemberClientset(t, "member1").AppsV1().Deployments("shared").Get(ctx, "b-web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), "b-web on member1: " + fmt.Sprint(err)
	})
}

// TestAmbiguityReported: a third tenant listing the shared namespace
// without a resourceSelector is admitted and reported not Ready, naming the
// tenants it shares with; the CLI shows who may do what where.
func TestAmbiguityReported(t *testing.T) {
	teams(t)
	admin := world.Client(t)
	framework.CreateAndCleanup(t, admin, utiltesting.MakeTenant("team-c").ServiceAccount("team-c", "dev").
		Namespaces("team-c", "shared").ClusterNames("member1").Obj())
	tn := waitTenant(t, "team-c", func(tn *tenancyv1alpha1.Tenant) bool {
		c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionFalse
	})
	c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionReady)
	if c.Reason != "SharedWithoutSelector" || !strings.Contains(c.Message, "namespace shared is also listed by team-a, team-b") {
		t.Errorf("team-c Ready=%s %s %q, want SharedWithoutSelector naming team-a, team-b", c.Status, c.Reason, c.Message)
	}

	list := world.Atoll(t, "tenant", "list", "--kubeconfig", world.Kubeconfig)
	for _, want := range []string{"team-a", "team-a,shared*", "member1", "team-c", "False"} {
		if !strings.Contains(list, want) {
			t.Errorf("atoll tenant list does not show %q:\n%s", want, list)
		}
	}
	describe := world.Atoll(t, "tenant", "describe", "team-a", "--kubeconfig", world.Kubeconfig)
	for _, want := range []string{"ServiceAccount team-a/dev", "shared (shared with team-b", "member1", "team=a"} {
		if !strings.Contains(describe, want) {
			t.Errorf("atoll tenant describe team-a does not show %q:\n%s", want, describe)
		}
	}
}

// TestNamespacesProvisionedToTenantClusters: a namespace a Tenant lists is
// auto-provisioned only to that tenant's clusters (the union of the sets
// when several tenants share it); one no tenant lists goes to every
// cluster, as in Karmada. team-a's namespace existed before its Tenant:
// it is withdrawn from member2, where team-a may place nothing.
func TestNamespacesProvisionedToTenantClusters(t *testing.T) {
	teams(t)
	want := map[string]string{"team-a": "member1", "team-b": "member2", "shared": "member1,member2", "ops": "member1,member2"}
	for ns, on := range want {
		framework.Eventually(t, 2*time.Minute, "namespace "+ns+" on exactly "+on, func() (bool, string) {
			var got []string
			for _, m := range []string{"member1", "member2"} {
				n, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
				switch {
				case err == nil && n.DeletionTimestamp.IsZero():
					got = append(got, m)
				case err != nil && !apierrors.IsNotFound(err):
					return false, err.Error()
				}
			}
			return strings.Join(got, ",") == on, fmt.Sprintf("on %v", got)
		})
	}
	var crb workv1alpha2.ClusterResourceBinding
	if err := world.Client(t).Get(context.Background(), client.ObjectKey{Name: names.BindingName("Namespace", "team-a")}, &crb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(crb.Status.Conditions, workv1alpha2.Scheduled); c == nil || !strings.Contains(c.Message, "Tenant team-a's cluster set keeps it off member2") {
		t.Errorf("team-a namespace's Scheduled condition %+v, want one naming the tenant's cluster set", c)
	}
}
