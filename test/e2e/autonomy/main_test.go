// Package autonomy tests, end to end, that member clusters are autonomous
// (DESIGN.md section 1): with the federation control plane crashed by
// `atoll sim fault control-plane stop`, members keep serving and their own
// HPAs keep scaling; after `control-plane start` atoll catches up on status
// without writing anything to the members.
package autonomy

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{
		Members: 2,
		Args:    append([]string{"--member-args=--hpa-sync-period=3s"}, framework.FastClusterHealthArgs()...),
	}))
}
