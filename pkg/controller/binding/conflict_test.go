package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

func TestConflictResolution(t *testing.T) {
	cases := map[string]struct {
		annotation string
		policy     policyv1alpha1.ConflictResolution
		want       policyv1alpha1.ConflictResolution
	}{
		"no annotation: the policy's":       {policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictOverwrite},
		"overwrite annotation beats Abort":  {annotation: "overwrite", policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictOverwrite},
		"abort annotation beats Overwrite":  {annotation: "abort", policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictAbort},
		"unknown annotation: the policy's":  {annotation: "maybe", policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictAbort},
		"annotation is case-insensitive":    {annotation: "Overwrite", want: policyv1alpha1.ConflictOverwrite},
		"empty policy and annotation stays": {want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if tc.annotation != "" {
				u.SetAnnotations(map[string]string{ConflictResolutionAnnotation: tc.annotation})
			}
			if diff := cmp.Diff(tc.want, conflictResolution(u, tc.policy)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
