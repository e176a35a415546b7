// Package ownership reads and removes atoll's ownership record on member
// objects. atoll changes or deletes a member object only when the object
// carries the record of the binding that wants it (DESIGN.md section 9):
// the managed label, the annotations naming the binding, and the binding's
// permanent id. A label anyone can set is never enough on its own.
package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Record is the binding a member object says it belongs to.
type Record struct {
	// Cluster is true for a ClusterResourceBinding.
	Cluster     bool
	Namespace   string
	Name        string
	PermanentID string
}

// Of reads the record on obj; ok is false unless it is complete (managed
// label, binding name and permanent id).
func Of(obj metav1.Object) (Record, bool) {
	l, a := obj.GetLabels(), obj.GetAnnotations()
	if l[workv1alpha2.ManagedLabel] != "true" {
		return Record{}, false
	}
	if name := a[workv1alpha2.ResourceBindingNameAnnotation]; name != "" {
		r := Record{Namespace: a[workv1alpha2.ResourceBindingNamespaceAnnotation], Name: name, PermanentID: l[workv1alpha2.ResourceBindingPermanentIDLabel]}
		return r, r.Namespace != "" && r.PermanentID != ""
	}
	if name := a[workv1alpha2.ClusterResourceBindingAnnotation]; name != "" {
		r := Record{Cluster: true, Name: name, PermanentID: l[workv1alpha2.ClusterResourceBindingPermanentIDLabel]}
		return r, r.PermanentID != ""
	}
	return Record{}, false
}

// Keys are the labels and annotations that make a member object atoll's;
// handing an object back removes them.
var Keys = struct{ Labels, Annotations []string }{
	Labels: []string{workv1alpha2.ManagedLabel, workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingPermanentIDLabel},
	Annotations: []string{
		workv1alpha2.ResourceBindingNamespaceAnnotation, workv1alpha2.ResourceBindingNameAnnotation, workv1alpha2.ClusterResourceBindingAnnotation,
		workv1alpha2.ManifestHashAnnotation, workv1alpha2.PreserveOnDeleteAnnotation, workv1alpha2.TookOverAnnotation,
	},
}

// HandBackPatch is the JSON merge patch that removes atoll's marks from obj
// and leaves everything else as it is. It carries obj's resourceVersion, so
// it fails with a conflict instead of racing a concurrent change.
func HandBackPatch(obj metav1.Object) ([]byte, error) {
	nulls := func(keys []string, have map[string]string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if _, ok := have[k]; ok {
				out[k] = nil
			}
		}
		return out
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"labels":          nulls(Keys.Labels, obj.GetLabels()),
		"annotations":     nulls(Keys.Annotations, obj.GetAnnotations()),
	}})
}

// HandedOver reports whether atoll keeps obj when it lets go of it instead
// of deleting it: it took obj over from someone else (conflictResolution
// Overwrite), or the binding preserves resources on deletion.
func HandedOver(obj metav1.Object) bool {
	a := obj.GetAnnotations()
	return a[workv1alpha2.TookOverAnnotation] == "true" || a[workv1alpha2.PreserveOnDeleteAnnotation] == "true"
}

// Deleter deletes objects of one resource: a dynamic or a metadata
// client's ResourceInterface.
type Deleter interface {
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error
}

// ErrChanged is Delete's answer when the object is no longer the version
// whose record the caller checked.
var ErrChanged = errors.New("changed since its ownership record was read")

// Delete deletes obj, the version of a member object whose ownership
// record the caller has just checked, and no other version: the DELETE
// carries obj's uid and resourceVersion as preconditions. An object
// changed since it was read (taken over and its record removed, or
// deleted and created again under the same name) is left in place and
// Delete returns ErrChanged: read it again and decide again. Deleting an
// object that is already gone is not an error. opts' own preconditions are
// replaced.
func Delete(ctx context.Context, ri Deleter, obj metav1.Object, opts metav1.DeleteOptions) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	opts.Preconditions = &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}
	err := ri.Delete(ctx, obj.GetName(), opts)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return ErrChanged
	}
	return err
}

// Apply server-side applies desired (forced, as fieldManager) over
// checked, the version of the member object whose ownership record the
// caller checked and whose fields it kept (a member HPA's replicas); nil
// when the caller takes over an object that is not atoll's (conflict
// resolution Overwrite). An object that was not there when the caller
// looked is created with Create, never with Apply. The body carries checked's
// resourceVersion, so an object changed since it was read (taken over and
// its record removed, scaled by its member HPA) is not written: Apply
// returns ErrChanged, and the caller reads it again and decides again.
// An object deleted since it was read is created again: server-side apply
// creates what does not exist whatever resourceVersion the body names
// (checked on the embedded API server), as the next pass would anyway.
// Field validation is off: the member's API server then parses the body
// once instead of twice (the default, Warn, parses it again as strict YAML
// only to warn about duplicate fields, which a body encoded from a map
// cannot have); a field the member does not know still fails the apply
// (design 0013, decision 49). desired's resourceVersion is set.
func Apply(ctx context.Context, ri dynamic.ResourceInterface, desired, checked *unstructured.Unstructured,
	fieldManager string) (*unstructured.Unstructured, error) {
	rv := ""
	if checked != nil {
		rv = checked.GetResourceVersion()
	}
	desired.SetResourceVersion(rv)
	body, err := encode(desired)
	if err != nil {
		return nil, err
	}
	force := true
	applied, err := ri.Patch(ctx, desired.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: fieldManager, Force: &force, FieldValidation: metav1.FieldValidationIgnore})
	if rv != "" && apierrors.IsConflict(err) {
		return nil, ErrChanged
	}
	return applied, err
}

// ErrExists is Create's answer when an object of that name was there
// after all: created by someone else since the caller looked.
var ErrExists = errors.New("exists, created by someone else since atoll looked; left as it was")

// Create creates desired, which the caller found absent, by server-side
// apply as fieldManager (so later applies own the same fields), and
// writes nothing into an object someone else created since the caller
// looked: server-side apply has no "must not exist" precondition, and a
// forced apply merged into such an object, overwrote its owner's fields
// and put atoll's ownership record on it, so that a later withdrawal
// deleted it. The apply is not forced: a field the object's owner set to
// another value fails it with a conflict before anything is written. One
// that conflicts with nothing (the owner set the same values, or none of
// atoll's fields) is written, and the API server's answer tells it (200,
// not 201 Created); Create then applies an empty configuration as
// fieldManager to that object (its uid: not to one deleted or replaced
// since), which takes out every field only atoll's apply set, ownership
// record included, and leaves the values both set with their owner.
// Either way it returns ErrExists, and the caller decides again by its
// conflict resolution. rc is the member's REST client of
// dynamic.ConfigFor, the one its dynamic client is built on (the dynamic
// client does not return the response's status code).
func Create(ctx context.Context, rc rest.Interface, gvr schema.GroupVersionResource, desired *unstructured.Unstructured,
	fieldManager string) (*unstructured.Unstructured, error) {
	desired.SetResourceVersion("")
	body, err := encode(desired)
	if err != nil {
		return nil, err
	}
	var status int
	result := patch(rc, types.ApplyPatchType, gvr, desired, fieldManager).Param("fieldValidation", metav1.FieldValidationIgnore).
		Body(body).Do(ctx).StatusCode(&status)
	created := &unstructured.Unstructured{}
	switch err := result.Into(created); {
	case apierrors.IsConflict(err):
		return nil, fmt.Errorf("%s %s: %w (a field atoll sets has another value and owner there)", desired.GetKind(), klog.KObj(desired), ErrExists)
	case err != nil:
		return nil, err
	case status == http.StatusCreated:
		return created, nil
	}
	// The object was there: take out what this apply put in, from that
	// object only (its uid): one deleted or replaced since is left alone.
	// Should the release fail, the ownership record at least must go, or
	// the next pass would take the object for atoll's.
	relErr := release(ctx, rc, gvr, created, fieldManager)
	if relErr == nil {
		return nil, fmt.Errorf("%s %s: %w", desired.GetKind(), klog.KObj(desired), ErrExists)
	}
	handedBack, err := HandBack(ctx, dynamic.New(rc).Resource(gvr).Namespace(created.GetNamespace()), created, fieldManager)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w, but taking atoll's fields and ownership record out of it again failed: %w",
			desired.GetKind(), klog.KObj(desired), ErrExists, errors.Join(relErr, err))
	case !handedBack:
		return nil, fmt.Errorf("%s %s: %w (and since deleted, replaced or rid of atoll's record)", desired.GetKind(), klog.KObj(desired), ErrExists)
	}
	return nil, fmt.Errorf("%s %s: %w (atoll's ownership record taken out; its other fields not: %w)",
		desired.GetKind(), klog.KObj(desired), ErrExists, relErr)
}

// handBackAttempts bounds how often HandBack reads again an object that
// keeps changing under it.
const handBackAttempts = 3

// HandBack removes atoll's ownership record from obj, a member object
// that carries it, and leaves everything else as it is, with a merge
// patch over obj's resourceVersion (HandBackPatch), so a concurrent change
// is never overwritten. An object changed since obj was read is read
// again and, if it still carries the same record, patched over its new
// version. handedBack is false when there was nothing to take: the
// object was deleted, replaced by another of its name, or carries
// another record or none by now; nothing is written then.
func HandBack(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, fieldManager string) (handedBack bool, err error) {
	rec, _ := Of(obj)
	for range handBackAttempts {
		body, err := HandBackPatch(obj)
		if err != nil {
			return false, err
		}
		_, err = ri.Patch(ctx, obj.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !apierrors.IsConflict(err):
			return false, err
		}
		fresh, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		}
		if now, ok := Of(fresh); !ok || now != rec || fresh.GetUID() != obj.GetUID() {
			return false, nil
		}
		obj = fresh
	}
	return false, fmt.Errorf("%s %s changed %d times while atoll's ownership record was being taken out", obj.GetKind(), klog.KObj(obj), handBackAttempts)
}

// RESTClientFor is the REST client of cfg that Create takes: the one
// dynamic.NewForConfig builds its client on (dynamic.New wraps it), so a
// member's applies and creates share one client.
func RESTClientFor(cfg *rest.Config) (rest.Interface, error) {
	c := dynamic.ConfigFor(cfg)
	c.GroupVersion = nil
	c.APIPath = "/" // every request names its whole path
	return rest.UnversionedRESTClientFor(c)
}

// release applies an empty configuration of obj as fieldManager: the
// fields only fieldManager owned go, the ones another manager also owns
// stay with it. The configuration names obj's uid, so the apply neither
// creates an object deleted since (an apply creates what is absent) nor
// writes into another one created under its name.
func release(ctx context.Context, rc rest.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) error {
	empty := &unstructured.Unstructured{}
	empty.SetAPIVersion(obj.GetAPIVersion())
	empty.SetKind(obj.GetKind())
	empty.SetNamespace(obj.GetNamespace())
	empty.SetName(obj.GetName())
	empty.SetUID(obj.GetUID())
	body, err := encode(empty)
	if err != nil {
		return err
	}
	return patch(rc, types.ApplyPatchType, gvr, obj, fieldManager).Body(body).Do(ctx).Error()
}

// patch is a PATCH of obj (a gvr object) as fieldManager, at the URL path
// the dynamic client would use.
func patch(rc rest.Interface, pt types.PatchType, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) *rest.Request {
	p := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"api", gvr.Version}
	}
	if ns := obj.GetNamespace(); ns != "" {
		p = append(p, "namespaces", ns)
	}
	return rc.Patch(pt).AbsPath(append(p, gvr.Resource, obj.GetName())...).Param("fieldManager", fieldManager)
}

// encode is obj's JSON body.
func encode(obj *unstructured.Unstructured) ([]byte, error) {
	body, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	return body, nil
}
