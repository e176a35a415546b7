package executor

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// TestWaitReason: the withdrawals that wait on the member's state say so,
// however deeply wrapped; every other failure gives no reason.
func TestWaitReason(t *testing.T) {
	partial := &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		{Group: "metrics.k8s.io", Version: "v1beta1"}: errors.New("stale GroupVersion discovery: metrics.k8s.io/v1beta1"),
	}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"custom resources left", fmt.Errorf("withdrawing CustomResourceDefinition x from cluster m: 2 object(s) of it left: %w", errContentsLeft), errContentsLeft.Error()},
		{"a group unseen", fmt.Errorf("discovering the resources of cluster m: %w: %w", errGroupsUnseen, partial), errGroupsUnseen.Error()},
		{"joined with another cluster's failure", errors.Join(errors.New("cluster a: timeout"), fmt.Errorf("cluster b: %w", errContentsLeft)), errContentsLeft.Error()},
		{"the discovery failure alone", partial, ""},
		{"a transient failure", errors.New("connection refused"), ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitReason(tc.err); got != tc.want {
				t.Errorf("waitReason(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
