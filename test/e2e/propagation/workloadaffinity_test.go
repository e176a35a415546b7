package propagation

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/workloadaffinity"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestWorkloadAffinity: placement.workloadAffinity (Karmada's
// inter-workload affinity). Workloads of an anti-affinity group go to
// different clusters; with both clusters taken a third is unschedulable
// and says why, and takes the cluster freed when one of the others is
// deleted. Workloads of an affinity group follow the first one's cluster.
// Each policy places one workload on one cluster (spread maxGroups 1).
func TestWorkloadAffinity(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	c := world.Client(t)
	ns := "workload-affinity"
	framework.CreateNamespace(t, c, ns)
	oneCluster := []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}}
	framework.CreateAndCleanup(t, c,
		utiltesting.MakePropagationPolicy("apart", ns).SelectLabels("apps/v1", "Deployment", map[string]string{"ha.group": "db"}).
			Placement(&policyv1alpha1.Placement{SpreadConstraints: oneCluster, WorkloadAffinity: &policyv1alpha1.WorkloadAffinity{
				AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "ha.group"}}}).Obj(),
		utiltesting.MakePropagationPolicy("together", ns).SelectLabels("apps/v1", "Deployment", map[string]string{"train.group": "t1"}).
			Placement(&policyv1alpha1.Placement{SpreadConstraints: oneCluster, WorkloadAffinity: &policyv1alpha1.WorkloadAffinity{
				Affinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "train.group"}}}).Obj(),
	)
	db := func(name string) client.Object {
		return utiltesting.MakeDeployment(name, ns).Label("ha.group", "db").Replicas(1).Obj()
	}
	// Created together: the scheduler places one group member at a time.
	framework.CreateAndCleanup(t, c, db("db-a"), db("db-b"))
	a, b := placedOn(ctx, t, c, ns, "db-a"), placedOn(ctx, t, c, ns, "db-b")
	if a == b {
		t.Fatalf("db-a and db-b, one anti-affinity group, are both on %s", a)
	}
	rb, err := framework.GetBinding(ctx, c, ns, "db-a-deployment")
	if err != nil {
		t.Fatal(err)
	}
	if g := rb.Spec.WorkloadAffinityGroups; g == nil || g.AntiAffinityGroup != "ha.group=db" || g.AffinityGroup != "" {
		t.Fatalf("db-a's binding has workloadAffinityGroups %+v, want antiAffinityGroup ha.group=db", g)
	}
	framework.Eventually(t, time.Minute, "db-a runs in "+a+" only", func() (bool, string) {
		return inMembers(ctx, t, ns, "db-a") == a, "in " + inMembers(ctx, t, ns, "db-a")
	})

	framework.CreateAndCleanup(t, c, db("db-c"))
	framework.Eventually(t, time.Minute, "db-c is unschedulable: both clusters run its group", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, "db-c-deployment")
		if err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil {
			return false, "no Scheduled condition"
		}
		return cond.Status == "False" && cond.Reason == workv1alpha2.BindingReasonNoClusterFit &&
			strings.Contains(cond.Message, workloadaffinity.ReasonAntiAffinity+" ha.group=db") && len(rb.Spec.Clusters) == 0, cond.Reason + ": " + cond.Message
	})
	framework.Eventually(t, 10*time.Second, "db-a is deleted", func() (bool, string) {
		err := c.Delete(ctx, db("db-a"))
		return err == nil, "delete: " + errString(err)
	})
	if got := placedOn(ctx, t, c, ns, "db-c"); got != a {
		t.Fatalf("db-c went to %s, want %s, the cluster db-a left", got, a)
	}

	train := func(name string) client.Object {
		return utiltesting.MakeDeployment(name, ns).Label("train.group", "t1").Replicas(1).Obj()
	}
	framework.CreateAndCleanup(t, c, train("train-1"), train("train-2"), train("train-3"))
	first := placedOn(ctx, t, c, ns, "train-1")
	for _, name := range []string{"train-2", "train-3"} {
		if got := placedOn(ctx, t, c, ns, name); got != first {
			t.Fatalf("%s is on %s, train-1 on %s: one affinity group", name, got, first)
		}
	}
}

// placedOn waits until the Deployment's binding is placed on one cluster
// and returns it.
func placedOn(ctx context.Context, t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	var on string
	framework.Eventually(t, time.Minute, name+" is placed on one cluster", func() (bool, string) {
		rb, err := framework.GetBinding(ctx, c, ns, name+"-deployment")
		if err != nil {
			return false, err.Error()
		}
		if len(rb.Spec.Clusters) != 1 {
			return false, "clusters " + resultOf(rb.Spec.Clusters)
		}
		on = rb.Spec.Clusters[0].Name
		return true, ""
	})
	return on
}

// inMembers lists the members that have the Deployment, comma-separated.
func inMembers(ctx context.Context, t *testing.T, ns, name string) string {
	var in []string
	for _, m := range members {
		if _, err := world.MemberClientset(t, m).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			in = append(in, m)
		}
	}
	slices.Sort(in)
	return strings.Join(in, ",")
}

func resultOf(clusters []workv1alpha2.TargetCluster) string {
	var parts []string
	for _, tc := range clusters {
		parts = append(parts, tc.Name)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
