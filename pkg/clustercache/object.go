package clustercache

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
	"github.com/atoll-dev/atoll/pkg/util/jsonvalue"
)

// Object is a member object as the member informers keep it: the metadata
// that event handlers read (name, namespace, uid, resourceVersion,
// generation, deletion timestamp, and of the annotations only those naming
// the owning binding, OwnerAnnotations), and the whole object as packed
// JSON. Everything else, labels and the other annotations included, is
// read from the decoded object (Unstructured, Live). A decoded unstructured
// object costs several times its JSON in memory (issue 14: the member
// copies were a third of the controller-manager's heap), so it is decoded
// only when a reconcile asks for it; packed, the JSON itself is a sixth to
// a third of its size (jsonpack). The label and annotation maps kept
// beside it cost as much again (1.1 KB per copy, of which 0.6 KB the two
// maps, and 0.3 KB a map of just the owner's two keys), so the owner's
// values are kept as plain strings and GetAnnotations builds the map.
type Object struct {
	metav1.TypeMeta
	objectMeta
	// owner holds the values of OwnerAnnotations, in that order ("" when
	// absent).
	owner [len(OwnerAnnotations)]string
	// initialEventsEnd is set on the bookmark that ends a watch's initial
	// events (the k8s.io/initial-events-end annotation), which the
	// reflector reads from GetAnnotations.
	initialEventsEnd bool
	packed           []byte
}

// GetAnnotations returns the owner annotations the object carries (nil
// when none): the only annotations an Object keeps, with, on a watch's
// bookmark, the one that ends its initial events.
func (o *Object) GetAnnotations() map[string]string {
	var out map[string]string
	for i, k := range OwnerAnnotations {
		if v := o.owner[i]; v != "" {
			if out == nil {
				out = make(map[string]string, 2)
			}
			out[k] = v
		}
	}
	if o.initialEventsEnd {
		if out == nil {
			out = make(map[string]string, 1)
		}
		out[metav1.InitialEventsAnnotationKey] = "true"
	}
	return out
}

// SetAnnotations keeps, of a, the owner annotations (and the end of
// initial events).
func (o *Object) SetAnnotations(a map[string]string) {
	for i, k := range OwnerAnnotations {
		o.owner[i] = a[k]
	}
	o.initialEventsEnd = a[metav1.InitialEventsAnnotationKey] == "true"
}

// Unstructured decodes the object; the result is the caller's to change.
func (o *Object) Unstructured() (*unstructured.Unstructured, error) {
	raw, err := jsonpack.Unpack(o.packed)
	if err != nil {
		return nil, fmt.Errorf("unpacking cached %s %s/%s: %w", o.Kind, o.namespace, o.name, err)
	}
	u := &unstructured.Unstructured{}
	if err := jsonvalue.Unstructured(raw, u); err != nil {
		return nil, fmt.Errorf("decoding cached %s %s/%s: %w", o.Kind, o.namespace, o.name, err)
	}
	return u, nil
}

// Packed returns the object's JSON as jsonpack packed it, less
// managedFields. It is shared: the caller must not change it.
func (o *Object) Packed() []byte { return o.packed }

// DeepCopyObject implements runtime.Object; the JSON is never changed, so
// copies share it.
func (o *Object) DeepCopyObject() runtime.Object {
	c := *o
	c.deletionTimestamp = o.deletionTimestamp.DeepCopy()
	return &c
}

// OwnerAnnotations are the annotations an Object keeps in its metadata: the
// ones the executor writes on every member object to name its binding.
var OwnerAnnotations = [...]string{
	workv1alpha2.ResourceBindingNamespaceAnnotation,
	workv1alpha2.ResourceBindingNameAnnotation,
	workv1alpha2.ClusterResourceBindingAnnotation,
}

// Live returns a cached member object (as a lister returns it) decoded;
// nil when obj is not one.
func Live(obj runtime.Object) *unstructured.Unstructured {
	switch o := obj.(type) {
	case *Object:
		u, err := o.Unstructured()
		if err != nil {
			return nil
		}
		return u
	case *unstructured.Unstructured:
		return o
	}
	return nil
}
