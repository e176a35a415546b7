package controlplane

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

// ControlPlaneControllers are the kube-controller-manager controllers the
// federation control plane runs, as Karmada's does: namespace deletion
// (a deleted namespace's objects are deleted, so it does not stay
// Terminating) and garbage collection (dependents of a deleted owner go).
// Nothing that would act on templates as workloads (no deployment or
// replicaset controller: templates are not run in the control plane).
var ControlPlaneControllers = []string{"namespace-controller", "garbage-collector-controller"}

// ControllerManagerConfig is what a kube-controller-manager needs.
type ControllerManagerConfig struct {
	// Kubeconfig is its root credential (admin).
	Kubeconfig string
	// ClusterName names the cluster in its logs and objects.
	ClusterName string
	// Controllers it runs (--controllers).
	Controllers []string
	// ExtraArgs are more flags.
	ExtraArgs []string
}

// RunControllerManager runs the real kube-controller-manager in this
// process. It is built from its options rather than its cobra command so
// the caller's context stops it.
func RunControllerManager(ctx context.Context, c ControllerManagerConfig) (<-chan error, error) {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager options: %w", err)
	}
	known, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	named := s.Flags(known, disabled, aliases)
	s.ParsedFlags = &named
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	args := append([]string{
		"--kubeconfig=" + c.Kubeconfig,
		"--controllers=" + strings.Join(c.Controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--cluster-name=" + c.ClusterName,
		"--kube-api-qps=100",
		"--kube-api-burst=200",
	}, c.ExtraArgs...)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("kube-controller-manager feature gates: %w", err)
	}
	cfg, err := s.Config(ctx, known, disabled, aliases)
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager config: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- kcmapp.Run(ctx, cfg.Complete()) }()
	return done, nil
}
