// Package tenancy tests tenant boundaries end to end: `atoll up` with two
// simulated members, two tenants (team-a on member1, team-b on member2,
// sharing namespace "shared") whose members act through real
// ServiceAccount tokens bound with ordinary RBAC. RBAC lets both teams
// write policies anywhere, so every refusal here is atoll's.
package tenancy

import (
	"os"
	"testing"

	"github.com/atoll-dev/atoll/test/framework"
)

var world *framework.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(framework.RunWithControlPlane(m, &world, framework.Options{Members: 2}))
}
