package safety

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/test/framework"
)

// brokenAPIService is an aggregated API whose Service does not exist: its
// group fails discovery ("stale GroupVersion discovery") for as long as it
// is registered, as a member's metrics API does while its server is down.
const brokenAPIService = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.broken.atoll.test
spec:
  group: broken.atoll.test
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {namespace: default, name: nowhere}
`

// TestNamespaceWithdrawalWaitsForEveryAPIGroup: a member namespace atoll
// made is deleted only when atoll has seen everything in it, and an API
// group that does not answer discovery may hold objects atoll cannot see
// (which the namespace's deletion would take once the group is back). So
// while member1 has such a group, deleting the namespace from the control
// plane withdraws it from member2 and leaves member1's alone; once the
// group is gone, member1's is withdrawn too. Before, atoll went ahead with
// the groups that did answer.
func TestNamespaceWithdrawalWaitsForEveryAPIGroup(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	const ns = "discovery-gap"
	apply(t, namespaceYAML(ns))
	for _, m := range []string{"member1", "member2"} {
		framework.Eventually(t, time.Minute, m+": namespace "+ns+" made by atoll", func() (bool, string) {
			n, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return n.Labels[workv1alpha2.ManagedLabel] == "true", fmt.Sprintf("labels %v", n.Labels)
		})
	}
	if out, err := world.MemberKubectl(t, "member1", brokenAPIService, "apply", "-f", "-"); err != nil {
		t.Fatalf("registering a broken API in member1: %v\n%s", err, out)
	}
	removeBroken := func() {
		if out, err := world.MemberKubectl(t, "member1", "", "delete", "apiservice", "v1.broken.atoll.test", "--ignore-not-found"); err != nil {
			t.Errorf("removing the broken API from member1: %v\n%s", err, out)
		}
	}
	t.Cleanup(removeBroken)
	framework.Eventually(t, 30*time.Second, "member1's broken group failing discovery", func() (bool, string) {
		_, err := world.MemberClientset(t, "member1").Discovery().ServerPreferredNamespacedResources()
		return err != nil, "discovery answers completely"
	})

	world.MustKubectl(t, "", "delete", "namespace", ns, "--wait=false")
	withdrawn := func(m string) func() (bool, string) {
		return func() (bool, string) {
			n, err := world.MemberClientset(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return n.DeletionTimestamp != nil, "not deleted"
		}
	}
	framework.Eventually(t, 2*time.Minute, "member2: namespace withdrawn", withdrawn("member2"))
	framework.Consistently(t, 15*time.Second, "member1: namespace kept while a group does not answer", func() (bool, string) {
		deleted, _ := withdrawn("member1")()
		return !deleted, "member1's namespace was deleted although atoll could not see all of it"
	})
	// The binding, held by its finalizer, says why.
	framework.Eventually(t, 30*time.Second, "event WithdrawalWaiting on the namespace's binding naming member1", func() (bool, string) {
		msgs, err := framework.EventMessages(ctx, world.Client(t), "default", ns+"-namespace", "WithdrawalWaiting")
		if err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(msgs, func(m string) bool {
			return strings.Contains(m, "cluster member1") && strings.Contains(m, "does not answer discovery")
		}), fmt.Sprintf("messages %q", msgs)
	})

	removeBroken()
	framework.Eventually(t, 2*time.Minute, "member1: namespace withdrawn once every group answers", withdrawn("member1"))
}
