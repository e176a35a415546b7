package detector

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// schedulePriority resolves the policy's spec.schedulePriority to the
// binding's: the value of the named Kubernetes PriorityClass, as Karmada's
// detector does. A PriorityClass that does not exist is an error: the
// binding is not written (Karmada creates none) and the template is tried
// again with backoff, so creating the PriorityClass later lets it through.
// A PriorityClass's value is immutable, so the binding never needs it again.
func (d *Detector) schedulePriority(ctx context.Context, p *Policy) (*workv1alpha2.SchedulePriority, error) {
	sp := p.Spec.SchedulePriority
	if sp == nil {
		return nil, nil
	}
	if sp.PriorityClassSource != policyv1alpha1.KubePriorityClass {
		return nil, fmt.Errorf("%s: spec.schedulePriority.priorityClassSource %q is not supported (only %s)",
			policyRef(p), sp.PriorityClassSource, policyv1alpha1.KubePriorityClass)
	}
	var pc schedulingv1.PriorityClass
	err := d.client.Get(ctx, types.NamespacedName{Name: sp.PriorityClassName}, &pc)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s: spec.schedulePriority.priorityClassName: PriorityClass %q does not exist", policyRef(p), sp.PriorityClassName)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading PriorityClass %q: %w", policyRef(p), sp.PriorityClassName, err)
	}
	return &workv1alpha2.SchedulePriority{Priority: pc.Value}, nil
}
