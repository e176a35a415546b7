package baseline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// Each component is claimed through a ClusterPropagationPolicy the
// controller generates: the detector then claims the component's templates
// by Karmada's rules (a PropagationPolicy that already claims a template
// keeps it, and the baseline reports the conflict), and the bindings carry
// spec.schedulerName atoll-baseline, so that this controller, not the
// scheduler, places them cluster by cluster.

// policyName is the generated policy's name for a component.
func policyName(baselineName, component string) string {
	name := "baseline-" + baselineName + "-" + component
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:253-17] + "-" + hex.EncodeToString(sum[:8])
}

// renderPolicy is the generated policy of component c.
func renderPolicy(cb *appsv1alpha1.ClusterBaseline, c *appsv1alpha1.BaselineComponent) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name:   policyName(cb.Name, c.Name),
			Labels: map[string]string{appsv1alpha1.BaselineLabel: cb.Name},
			Annotations: map[string]string{
				appsv1alpha1.ComponentAnnotation: c.Name,
				appsv1alpha1.DependsOnAnnotation: strings.Join(c.DependsOn, ","),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "ClusterBaseline", Name: cb.Name, UID: cb.UID,
				Controller: new(true), BlockOwnerDeletion: new(true),
			}},
		},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: c.ResourceSelectors,
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{LabelSelector: cb.Spec.ClusterSelector},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated},
			},
			// Above every user ClusterPropagationPolicy; a namespaced
			// PropagationPolicy still wins, as in Karmada.
			Priority:           new(int32(math.MaxInt32)),
			Preemption:         policyv1alpha1.PreemptNever,
			SchedulerName:      appsv1alpha1.SchedulerName,
			ConflictResolution: policyv1alpha1.ConflictAbort,
		},
	}
}

// ensurePolicies makes the generated policies of the active components
// match the spec; it returns the baseline's existing policies by component
// (those of removed components included: they go once withdrawn).
func (r *reconciler) ensurePolicies(ctx context.Context, cb *appsv1alpha1.ClusterBaseline, active []*appsv1alpha1.BaselineComponent) (map[string]*policyv1alpha1.ClusterPropagationPolicy, error) {
	var list policyv1alpha1.ClusterPropagationPolicyList
	if err := r.client.List(ctx, &list, client.MatchingLabels{appsv1alpha1.BaselineLabel: cb.Name}); err != nil {
		return nil, fmt.Errorf("listing the policies of baseline %s: %w", cb.Name, err)
	}
	have := map[string]*policyv1alpha1.ClusterPropagationPolicy{}
	for i := range list.Items {
		p := &list.Items[i]
		if owned(p, cb) {
			have[p.Annotations[appsv1alpha1.ComponentAnnotation]] = p
		}
	}
	for _, c := range active {
		want := renderPolicy(cb, c)
		p, ok := have[c.Name]
		switch {
		case !ok:
			if err := r.client.Create(ctx, want); err != nil {
				return nil, fmt.Errorf("creating policy %s of baseline %s: %w", want.Name, cb.Name, err)
			}
			have[c.Name] = want
		case !semantic.Equal(p.Spec, want.Spec) || !semantic.Equal(p.Annotations[appsv1alpha1.DependsOnAnnotation], want.Annotations[appsv1alpha1.DependsOnAnnotation]):
			orig := p.DeepCopy()
			p.Spec = want.Spec
			p.Annotations[appsv1alpha1.DependsOnAnnotation] = want.Annotations[appsv1alpha1.DependsOnAnnotation]
			if err := r.client.Patch(ctx, p, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
				return nil, fmt.Errorf("updating policy %s of baseline %s: %w", p.Name, cb.Name, err)
			}
		}
	}
	return have, nil
}

// owned: the policy is this baseline's (by uid, not by a label anyone can
// set).
func owned(p *policyv1alpha1.ClusterPropagationPolicy, cb *appsv1alpha1.ClusterBaseline) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == cb.UID && p.Annotations[appsv1alpha1.ComponentAnnotation] != ""
}

// dependsOnOf reads a generated policy's recorded dependsOn.
func dependsOnOf(p *policyv1alpha1.ClusterPropagationPolicy) []string {
	v := p.Annotations[appsv1alpha1.DependsOnAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
