// Package simcluster runs one simulated member cluster (`atoll sim cluster`).
// It is apart from pkg/cli/sim because it links k8s.io/kubernetes.
package simcluster

import (
	"context"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/logging"
	"github.com/atoll-dev/atoll/pkg/cli/profiling"
	"github.com/atoll-dev/atoll/pkg/sim/member"
)

// Cluster runs one simulated member cluster until ctx ends.
func Cluster(ctx context.Context, cfg *cmds.SimCluster) error {
	if err := logging.Setup(cfg.Logging.LogFile, cfg.Logging.Verbosity); err != nil {
		return err
	}
	profiling.SampleHeapOnlyWhenProfiled("") // a member serves no profiling endpoint
	return member.Run(ctx, member.Options{
		Name:               cfg.Name,
		DataDir:            cfg.DataDir,
		Nodes:              cfg.Nodes,
		NodeCPU:            cfg.NodeCPU,
		NodeMemory:         cfg.NodeMemory,
		MaxPods:            cfg.MaxPods,
		PodReadyDelay:      cfg.PodReadyDelay,
		JobPodRunTime:      cfg.JobPodRunTime,
		Region:             cfg.Region,
		Zone:               cfg.Zone,
		Provider:           cfg.Provider,
		HPASyncPeriod:      cfg.HPASyncPeriod,
		HPADownscaleWindow: cfg.HPADownscaleStabilization,
		APIOnly:            cfg.APIOnly,
	})
}
