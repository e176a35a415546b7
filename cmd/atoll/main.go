// Command atoll is the single binary of the atoll federation control plane.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/controllermanager"
	"github.com/atoll-dev/atoll/pkg/cli/crds"
	"github.com/atoll-dev/atoll/pkg/cli/get"
	"github.com/atoll-dev/atoll/pkg/cli/join"
	"github.com/atoll-dev/atoll/pkg/cli/rebalance"
	"github.com/atoll-dev/atoll/pkg/cli/sim"
	"github.com/atoll-dev/atoll/pkg/cli/simcluster"
	"github.com/atoll-dev/atoll/pkg/cli/tenant"
	"github.com/atoll-dev/atoll/pkg/cli/up"
)

func main() {
	// controller-runtime clients (used by several verbs) log through klog.
	ctrllog.SetLogger(klog.NewKlogr())
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-signals
		cancel() // first signal: stop cleanly
		<-signals
		fmt.Fprintln(os.Stderr, "atoll: second signal, exiting now")
		os.Exit(1)
	}()

	root := cmds.NewRootCommand(cmds.Actions{
		Up:                up.Run,
		ControllerManager: controllermanager.Run,
		CRDs:              crds.Run,
		RBAC:              crds.RBAC,
		Sim:               cmds.SimActions{Cluster: simcluster.Cluster, Load: sim.Load, Fault: sim.Fault},
		Join:              join.Join,
		Unjoin:            join.Unjoin,
		Get:               get.Run,
		Rebalance:         rebalance.Run,
		Tenant:            tenant.Run,
	})
	err := root.ExecuteContext(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "atoll: %v\n", err)
		os.Exit(1)
	}
}
