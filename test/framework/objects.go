package framework

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// callTimeout bounds each API call of the helpers below that fail the test
// on an error (they take t, not a context).
const callTimeout = time.Minute

// Create creates objs in order, failing the test on the first error.
func Create(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, client.ObjectKeyFromObject(o), err)
		}
	}
}

// CreateAndCleanup is Create with each object deleted again when the test
// ends (DeleteOnCleanup).
func CreateAndCleanup(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		DeleteOnCleanup(t, c, o)
		Create(t, c, o)
	}
}

// DeleteOnCleanup deletes objs, in order, when the test ends; an object
// already gone is fine, any other error fails the test.
func DeleteOnCleanup(t testing.TB, c client.Client, objs ...client.Object) {
	t.Cleanup(func() {
		for _, o := range objs {
			if err := c.Delete(context.Background(), o); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", o, client.ObjectKeyFromObject(o), err)
			}
		}
	})
}

// CreateNamespace creates namespace name (it stays when the test ends).
func CreateNamespace(t testing.TB, c client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := c.Create(ctx, utiltesting.MakeNamespace(name).Obj()); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// Update re-reads obj, applies mutate to it and writes it back, retrying
// any failure (a conflict with another writer, typically) for up to 30s.
// obj then holds what was written.
func Update[T client.Object](t testing.TB, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	Eventually(t, 30*time.Second, fmt.Sprintf("updating %T %s", obj, client.ObjectKeyFromObject(obj)), func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		mutate(obj)
		if err := c.Update(ctx, obj); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// GetBinding reads ResourceBinding ns/name (names.BindingName gives the
// name of a template's binding).
func GetBinding(ctx context.Context, c client.Client, ns, name string) (*workv1alpha2.ResourceBinding, error) {
	rb := &workv1alpha2.ResourceBinding{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb)
	return rb, err
}

// AggregatedStatusOf is the binding's status entry for cluster, nil when
// it has none.
func AggregatedStatusOf(rb *workv1alpha2.ResourceBinding, cluster string) *workv1alpha2.AggregatedStatusItem {
	for i := range rb.Status.AggregatedStatus {
		if rb.Status.AggregatedStatus[i].ClusterName == cluster {
			return &rb.Status.AggregatedStatus[i]
		}
	}
	return nil
}

// GetCluster reads Cluster name.
func GetCluster(ctx context.Context, c client.Client, name string) (*clusterv1alpha1.Cluster, error) {
	cl := &clusterv1alpha1.Cluster{}
	return cl, c.Get(ctx, client.ObjectKey{Name: name}, cl)
}

// ClusterReadyStatus is the status of the cluster's Ready condition, ""
// when it has none.
func ClusterReadyStatus(cl *clusterv1alpha1.Cluster) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil {
		return c.Status
	}
	return ""
}

// EventReasons lists the reasons of the events recorded on the object named
// name in namespace ns (for a cluster-scoped object, "default"), as
// Karmada's e2e suite finds them: core/v1 Events by involvedObject.name.
func EventReasons(ctx context.Context, c client.Client, ns, name string) (map[string]string, error) {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name {
			out[e.Reason] = e.Message
		}
	}
	return out, nil
}

// EventMessages lists the messages of the events with the given reason
// recorded on the object named name in namespace ns, oldest first.
func EventMessages(ctx context.Context, c client.Client, ns, name, reason string) ([]string, error) {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b corev1.Event) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out, nil
}

// Managers names the field managers of a managedFields record, as
// manager/operation/subresource, for a test's message.
func Managers(mf []metav1.ManagedFieldsEntry) []string {
	out := make([]string, 0, len(mf))
	for _, e := range mf {
		out = append(out, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
	}
	return out
}
