// Package get shows control-plane state (`atoll get`): member clusters,
// baseline delivery matrices and, for resource templates, where they run.
package get

import (
	"context"
	"strings"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
)

// Run dispatches `atoll get RESOURCE`.
func Run(ctx context.Context, cfg *cmds.Get) error {
	switch strings.ToLower(cfg.Resource) {
	case "clusters", "cluster", "clusters.cluster.karmada.io":
		return Clusters(ctx, cfg)
	case "baselines", "baseline", "cbl", "clusterbaselines", "clusterbaseline", "clusterbaselines.apps.atoll.dev":
		return Baselines(ctx, cfg)
	default:
		return Resources(ctx, cfg)
	}
}
