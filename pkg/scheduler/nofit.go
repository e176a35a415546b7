package scheduler

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/scheduler/framework"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/clusteraffinity"
	"github.com/atoll-dev/atoll/pkg/scheduler/plugins/tenantboundary"
)

// deselected reports whether an unschedulable attempt rejected every
// placed cluster because the user's selection no longer includes it:
// cluster affinity (labels, fields, names) or the tenant boundary, in every
// clusterAffinities term tried. A placed cluster rejected for anything
// else (taints, a missing API, spread or capacity) is not deselected: a
// cluster that is unhealthy or out of room never makes atoll remove a
// running workload.
func deselected(err error, placed []workv1alpha2.TargetCluster) bool {
	var fitErrs []*framework.FitError
	var terms *framework.TermsFitError
	var fe *framework.FitError
	switch {
	case errors.As(err, &terms):
		fitErrs = terms.Errors
	case errors.As(err, &fe):
		fitErrs = []*framework.FitError{fe}
	}
	if len(fitErrs) == 0 {
		return false
	}
	for _, fe := range fitErrs {
		for _, t := range placed {
			st := fe.Diagnosis.ClusterToStatus[t.Name]
			if st == nil || (st.Plugin() != clusteraffinity.Name && st.Plugin() != tenantboundary.Name) {
				return false
			}
		}
	}
	return true
}

// withdrawsWhenNoFit is the choice of the policy claiming obj's template
// (policyv1alpha1.WhenNoClusterFitsAnnotation), else the controller's.
func (r *reconciler) withdrawsWhenNoFit(ctx context.Context, obj client.Object) bool {
	if policy := r.policyOf(ctx, obj); policy != nil {
		switch policy.GetAnnotations()[policyv1alpha1.WhenNoClusterFitsAnnotation] {
		case "Withdraw":
			return true
		case "Keep":
			return false
		}
	}
	return r.withdrawWhenNoFit
}
