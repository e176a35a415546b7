package bindingkind

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
)

// ExecutorSynced reports whether status was written by the executor for
// the binding's generation or a later one (its FullyApplied condition, which
// every executor write carries, observed it): the member copies of that
// generation were applied before the status was read from them.
func ExecutorSynced(status *workv1alpha2.ResourceBindingStatus, generation int64) bool {
	c := meta.FindStatusCondition(status.Conditions, workv1alpha2.FullyApplied)
	return c != nil && c.ObservedGeneration >= generation
}

// ConflictRetry is how soon a controller whose status write lost a race
// tries again, re-reading the binding.
const ConflictRetry = 100 * time.Millisecond

// WriteStatus is the one way controllers write a binding's status: it makes
// b's status equal status with one merge patch guarded by b's
// resourceVersion (several controllers write parts of the same status, and a
// merge patch replaces whole lists such as conditions, so an unguarded write
// could drop another controller's condition). Nothing is written when the
// status is unchanged. A lost race is not an error: retry says when to
// re-read and try again (later when the guard of a controller's client
// knew the race lost without sending: its cache is behind). On success b
// holds the written object.
func WriteStatus(ctx context.Context, c client.Client, b client.Object, status *workv1alpha2.ResourceBindingStatus) (retry time.Duration, err error) {
	if semantic.Equal(Status(b), status) {
		return 0, nil
	}
	base := b.DeepCopyObject().(client.Object)
	*Status(b) = *status.DeepCopy()
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(ctx, b, patch, client.FieldOwner(names.FieldManager)); err != nil {
		if stalewrites.IsStale(err) {
			return stalewrites.Retry, nil
		}
		if apierrors.IsConflict(err) {
			return ConflictRetry, nil
		}
		return 0, fmt.Errorf("writing the status of %s %s: %w", Of(b).Kind(), klog.KObj(b), err)
	}
	return 0, nil
}
