package propagation

import (
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestClusterBindingPermanentID is atoll's form of Karmada's
// ClusterResourceBinding spec "creates work with permanent ID label",
// which counts the Works carrying the binding's permanent id: atoll has
// no Works, so the objects carrying it are the member objects. A
// ClusterRole propagated to every member through a
// ClusterPropagationPolicy gets a ClusterResourceBinding with a permanent
// id, and each member's ClusterRole carries that same id — as many
// objects as members.
func TestClusterBindingPermanentID(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := world.Client(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-permanent-id"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	framework.CreateAndCleanup(t, c, role,
		utiltesting.MakePropagationPolicy("e2e-permanent-id", "").Select("rbac.authorization.k8s.io/v1", "ClusterRole", role.Name).
			ClusterNames(members...).ClusterObj())
	var id string
	framework.Eventually(t, time.Minute, "the ClusterResourceBinding has a permanent id", func() (bool, string) {
		var crb workv1alpha2.ClusterResourceBinding
		if err := c.Get(ctx, client.ObjectKey{Name: "e2e-permanent-id-clusterrole"}, &crb); err != nil {
			return false, err.Error()
		}
		id = crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
		return id != "", "labels " + labelString(crb.Labels)
	})
	framework.Eventually(t, time.Minute, "every member's ClusterRole carries the binding's permanent id", func() (bool, string) {
		carrying := 0
		for _, m := range members {
			got, err := world.MemberClientset(t, m).RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
			if err != nil {
				return false, m + ": " + err.Error()
			}
			if got.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != id {
				return false, m + ": labels " + labelString(got.Labels)
			}
			carrying++
		}
		return carrying == len(members), ""
	})
}
