package interpreter

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// maxConditionMessage bounds the condition message (a script error can be
// long).
const maxConditionMessage = 1024

// Reason is the Interpreted condition reason of a failing operation, e.g.
// ReplicaResourceFailed.
func (op Operation) Reason() string {
	s := string(op)
	return strings.ToUpper(s[:1]) + s[1:] + "Failed"
}

// RecordFailure makes conditions say whether the operations ops, run by one
// controller, failed: err, when a customization failed one of them, sets the
// Interpreted condition False naming the customization and the operation;
// otherwise a condition left by one of ops is removed (other controllers'
// operations are theirs to clear). It reports whether conditions changed.
func RecordFailure(conditions *[]metav1.Condition, generation int64, err error, ops ...Operation) bool {
	if e, ok := AsError(err); ok && slices.Contains(ops, e.Operation) {
		msg := e.Error()
		if len(msg) > maxConditionMessage {
			msg = msg[:maxConditionMessage-3] + "..."
		}
		return meta.SetStatusCondition(conditions, metav1.Condition{
			Type: workv1alpha2.Interpreted, Status: metav1.ConditionFalse, Reason: e.Operation.Reason(),
			Message: msg, ObservedGeneration: generation,
		})
	}
	c := meta.FindStatusCondition(*conditions, workv1alpha2.Interpreted)
	if c == nil {
		return false
	}
	for _, op := range ops {
		if c.Reason == op.Reason() {
			return meta.RemoveStatusCondition(conditions, workv1alpha2.Interpreted)
		}
	}
	return false
}

// ReplicasUnknown reports whether the binding's replicas could not be read
// (its replicaResource script fails): it must not be placed by count.
func ReplicasUnknown(conditions []metav1.Condition) bool {
	c := meta.FindStatusCondition(conditions, workv1alpha2.Interpreted)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == ReplicaResource.Reason()
}

// Version identifies what answers op for gvk: "" natively, else the
// customization's name and resourceVersion. A controller that caches an
// operation's result keys the cache by it, so that a changed customization
// is run again.
func (i *Interpreter) Version(ctx context.Context, gvk schema.GroupVersionKind, op Operation) string {
	if op == DependencyInterpretation {
		// Every customization's script counts (see Dependencies).
		all, err := i.scripts(ctx, gvk, op)
		if err != nil {
			return ""
		}
		parts := make([]string, len(all))
		for n, c := range all {
			parts[n] = c.customization + "@" + c.resourceVersion
		}
		return strings.Join(parts, ",")
	}
	c, err := i.script(ctx, gvk, op)
	if err != nil || c == nil {
		return ""
	}
	return c.customization + "@" + c.resourceVersion
}
