package scheduler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins"
)

// Simulator answers "where would this binding go?" with the scheduler's
// own plugins, without writing anything. Failover asks it before an
// eviction, so that it never removes a copy no other cluster can replace.
type Simulator struct {
	framework *framework.Framework
	reader    client.Reader
}

// NewSimulator builds a simulator with the plugin selection the scheduler
// uses (nil: all in-tree plugins). reader reads the Tenants and policies
// that bound a binding's clusters, as the scheduler does (nil: unbounded).
func NewSimulator(pluginSelection []string, reader client.Reader) (*Simulator, error) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), pluginSelection)
	if err != nil {
		return nil, err
	}
	return &Simulator{framework: fw, reader: reader}, nil
}

// Schedule runs one attempt for a binding of kind with the given spec and
// status (which it does not modify) over clusters, sorted by name.
func (s *Simulator) Schedule(ctx context.Context, kind string, obj client.Object, spec *workv1alpha2.ResourceBindingSpec,
	status *workv1alpha2.ResourceBindingStatus, clusters []*clusterv1alpha1.Cluster) (*framework.Result, error) {
	workloads, err := workloadGroups(ctx, s.reader, obj, spec)
	if err != nil {
		return nil, err
	}
	return s.framework.Schedule(ctx, newContext(kind, obj, spec, status, clusters, tenantBoundary(ctx, s.reader, obj, spec), workloads))
}

// newContext is the scheduling context of one attempt for a binding of
// kind with the given spec and status.
func newContext(kind string, obj client.Object, spec *workv1alpha2.ResourceBindingSpec,
	status *workv1alpha2.ResourceBindingStatus, clusters []*clusterv1alpha1.Cluster, tenant *framework.TenantBoundary,
	workloads *framework.WorkloadGroups) *framework.SchedulingContext {
	sc := framework.NewSchedulingContext(&framework.BindingView{
		Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), Generation: obj.GetGeneration(),
		Spec: spec, Status: status,
	}, clusters)
	sc.Tenant = tenant
	sc.Workloads = workloads
	return sc
}
