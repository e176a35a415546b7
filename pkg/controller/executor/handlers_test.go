package executor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// TestMemberFirstListGoesLast: the copies a member cache's first list
// delivers (a restart) enqueue their bindings behind those whose member
// objects changed meanwhile, and every copy seen is remembered.
func TestMemberFirstListGoesLast(t *testing.T) {
	r := &reconciler{kind: namespacedKind, reached: newReachedClusters()}
	var q workqueue.TypedRateLimitingInterface[reconcile.Request] = priorityqueue.New[reconcile.Request]("executor-member-test")
	defer q.ShutDown()
	r.queue.Store(&q)
	copyOf := func(binding string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: binding, Namespace: "ns", Annotations: map[string]string{
			workv1alpha2.ResourceBindingNamespaceAnnotation: "ns", workv1alpha2.ResourceBindingNameAnnotation: binding}}}
	}
	r.memberEvent("m1", copyOf("listed-1"), true, true)
	r.memberEvent("m1", copyOf("listed-2"), true, true)
	r.memberEvent("m1", copyOf("changed"), true, false)
	r.memberEvent("m1", copyOf("deleted"), false, false)
	r.memberEvent("m1", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "not-ours"}}, true, false)

	var got []string
	for range 4 {
		req, _, _ := q.(priorityqueue.PriorityQueue[reconcile.Request]).GetWithPriority()
		got = append(got, req.Name)
		q.Done(req)
	}
	if diff := cmp.Diff([]string{"changed", "deleted", "listed-1", "listed-2"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if n := q.Len(); n != 0 {
		t.Errorf("%d more in the queue, want none (an object naming no binding enqueues nothing)", n)
	}
	var reached []string
	for _, name := range []string{"listed-1", "listed-2", "changed", "deleted"} {
		for _, c := range r.reached.of(types.NamespacedName{Namespace: "ns", Name: name}, &workv1alpha2.ResourceBindingStatus{}) {
			reached = append(reached, name+"@"+c)
		}
	}
	if diff := cmp.Diff([]string{"listed-1@m1", "listed-2@m1", "changed@m1"}, reached); diff != "" {
		t.Errorf("remembered copies (-want +got):\n%s", diff)
	}
}
