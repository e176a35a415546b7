package integration

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestDeleteTakesOnlyTheCheckedVersion deletes a ConfigMap carrying a
// binding's ownership record through ownership.Delete, from the copy read
// before something else happened to it, on a real API server: the object
// goes only if it is still the version that was read. A delete that
// checked the uid alone (what the executor, pending withdrawals and unjoin
// sent before) deleted the object taken over in between.
func TestDeleteTakesOnlyTheCheckedVersion(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	const ns = "ownership-delete"
	c, ri := configMapsIn(t, ns)

	cases := map[string]struct {
		// meanwhile happens between the read and the delete.
		meanwhile func(t *testing.T, cm *corev1.ConfigMap)
		wantErr   error
		// wantLeft: the object left afterwards is the one meanwhile left.
		wantLeft bool
	}{
		"unchanged: deleted": {},
		"taken over (record removed): left alone": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				delete(cm.Labels, workv1alpha2.ManagedLabel)
				delete(cm.Annotations, workv1alpha2.ResourceBindingNameAnnotation)
				update(ctx, t, c, cm)
			},
			wantErr: ownership.ErrChanged, wantLeft: true,
		},
		"changed in any other way: left to be read again": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				cm.Data = map[string]string{"key": "someone's"}
				update(ctx, t, c, cm)
			},
			wantErr: ownership.ErrChanged, wantLeft: true,
		},
		"replaced by another of the same name: the new one stays": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				if err := c.Delete(ctx, cm); err != nil {
					t.Fatal(err)
				}
				fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name}, Data: map[string]string{"key": "new"}}
				if err := c.Create(ctx, fresh); err != nil {
					t.Fatal(err)
				}
				*cm = *fresh
			},
			wantErr: ownership.ErrChanged, wantLeft: true,
		},
		"already gone: nothing to do": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				if err := c.Delete(ctx, cm); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	names := caseNames(c, ns)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cm, checked := recordedCopy(ctx, t, c, ri, ns, names(t), tc.meanwhile)
			if _, owned := ownership.Of(checked); !owned {
				t.Fatalf("the test's ConfigMap carries no complete ownership record: %v %v", checked.GetLabels(), checked.GetAnnotations())
			}

			err := ownership.Delete(ctx, ri, checked, metav1.DeleteOptions{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Delete = %v, want %v", err, tc.wantErr)
			}
			left := &corev1.ConfigMap{}
			err = c.Get(ctx, client.ObjectKeyFromObject(cm), left)
			switch {
			case tc.wantLeft && err != nil:
				t.Fatalf("the object changed meanwhile is gone: %v", err)
			case tc.wantLeft && (left.UID != cm.UID || left.Data["key"] != cm.Data["key"]):
				t.Fatalf("left uid %s data %v, want what happened meanwhile: uid %s data %v", left.UID, left.Data, cm.UID, cm.Data)
			case !tc.wantLeft && !apierrors.IsNotFound(err):
				t.Fatalf("the object is still there (get: %v)", err)
			}
		})
	}
}

// TestApplyWritesOnlyOverTheCheckedVersion applies a ConfigMap through
// ownership.Apply over the copy read before something else happened to
// it, on a real API server: the apply writes only if the object is still
// that version, so a copy taken over meanwhile does not get atoll's record
// back, and one changed meanwhile (a member HPA's scale) is not reset to
// what atoll read. Without a read copy it creates the object.
func TestApplyWritesOnlyOverTheCheckedVersion(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	const ns = "ownership-apply"
	c, ri := configMapsIn(t, ns)

	cases := map[string]struct {
		// noCopy: the object does not exist and none was read.
		noCopy    bool
		meanwhile func(t *testing.T, cm *corev1.ConfigMap)
		wantErr   error
		// wantValue and wantManaged: what the object holds afterwards.
		wantValue   string
		wantManaged bool
	}{
		"unchanged: written":    {wantValue: "atoll's new", wantManaged: true},
		"no copy read: created": {noCopy: true, wantValue: "atoll's new", wantManaged: true},
		"taken over (record removed): left alone": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				delete(cm.Labels, workv1alpha2.ManagedLabel)
				cm.Data["key"] = "someone's"
				update(ctx, t, c, cm)
			},
			wantErr: ownership.ErrChanged, wantValue: "someone's", wantManaged: false,
		},
		"changed in any other way: not reset to what was read": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				cm.Data["key"] = "scaled"
				update(ctx, t, c, cm)
			},
			wantErr: ownership.ErrChanged, wantValue: "scaled", wantManaged: true,
		},
	}
	names := caseNames(c, ns)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmName := names(t)
			var checked *unstructured.Unstructured
			if !tc.noCopy {
				_, checked = recordedCopy(ctx, t, c, ri, ns, cmName, tc.meanwhile)
			}

			_, err := ownership.Apply(ctx, ri, desiredConfigMap(ns, cmName, map[string]any{"key": "atoll's new"}), checked, "atoll-test")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Apply = %v, want %v", err, tc.wantErr)
			}
			got := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cmName}, got); err != nil {
				t.Fatal(err)
			}
			if got.Data["key"] != tc.wantValue || (got.Labels[workv1alpha2.ManagedLabel] == "true") != tc.wantManaged {
				t.Fatalf("object holds %q, labels %v; want %q, managed %v", got.Data["key"], got.Labels, tc.wantValue, tc.wantManaged)
			}
		})
	}
}

// configMapsIn creates namespace ns on the shared control plane's API
// server and returns a typed client and a dynamic client for its
// ConfigMaps.
func configMapsIn(t *testing.T, ns string) (client.Client, dynamic.ResourceInterface) {
	t.Helper()
	c := shared.Client(t)
	dyn, err := dynamic.NewForConfig(shared.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	framework.CreateNamespace(t, c, ns)
	return c, dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns)
}

// recordedCopy creates ConfigMap ns/name carrying ownerRecord's record and
// key "atoll's", reads it as atoll would (read), and then runs meanwhile
// (nil: nothing) on it: what happens to the object after atoll read it
// (cm is the object as meanwhile left it).
func recordedCopy(ctx context.Context, t *testing.T, c client.Client, ri dynamic.ResourceInterface, ns, name string,
	meanwhile func(t *testing.T, cm *corev1.ConfigMap)) (cm *corev1.ConfigMap, read *unstructured.Unstructured) {
	t.Helper()
	labels, annotations := ownerRecord(ns)
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Data: map[string]string{"key": "atoll's"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	read, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meanwhile != nil {
		meanwhile(t, cm)
	}
	return cm, read
}

// desiredConfigMap is ConfigMap ns/name as atoll writes it: data and the
// ownership record of ownerRecord.
func desiredConfigMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name}, "data": data}}
	labels, annotations := ownerRecord(ns)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

// ownerRecord is the ownership record (labels, annotations) binding
// ns/web-deployment puts on its member copies.
func ownerRecord(ns string) (labels, annotations map[string]string) {
	return map[string]string{workv1alpha2.ManagedLabel: "true", workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"},
		map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotation: ns, workv1alpha2.ResourceBindingNameAnnotation: "web-deployment"}
}

// caseNames returns a function that gives each case of a table its own
// ConfigMap name in ns, deleted when the case ends.
func caseNames(c client.Client, ns string) func(t *testing.T) string {
	i := 0
	return func(t *testing.T) string {
		i++
		name := "cm-" + string(rune('a'+i))
		t.Cleanup(func() {
			_ = c.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		})
		return name
	}
}

func update(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// TestCreateWritesNothingIntoAnObjectThatAppeared creates a ConfigMap
// through ownership.Create, as the executor does when neither its member
// cache nor its conflict check saw one, on a real API server where
// someone else may have created one of that name in between. Only an
// absent object is written; one that appeared keeps its owner's values,
// gets no field of atoll's and no ownership record, and Create says
// ErrExists, so conflict resolution decides again. A forced apply (what
// the executor sent before) overwrote the other's values and put atoll's
// record on the object, which a later withdrawal then deleted.
func TestCreateWritesNothingIntoAnObjectThatAppeared(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	const ns = "ownership-create"
	c, ri := configMapsIn(t, ns)
	rc, err := ownership.RESTClientFor(shared.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	labels, _ := ownerRecord(ns)

	cases := map[string]struct {
		// appeared is the object someone else created first; nil: none.
		appeared *corev1.ConfigMap
		wantErr  error
		// wantData and wantLabels: what the object holds afterwards.
		wantData   map[string]string
		wantLabels map[string]string
		// wantUnwritten: the object keeps the resourceVersion it appeared with.
		wantUnwritten bool
	}{
		"absent: created": {
			wantData: map[string]string{"key": "atoll's", "atoll-only": "x"}, wantLabels: labels,
		},
		"appeared with other values: nothing written": {
			appeared: &corev1.ConfigMap{Data: map[string]string{"key": "someone's"}, ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}},
			wantErr:  ownership.ErrExists,
			wantData: map[string]string{"key": "someone's"}, wantLabels: map[string]string{"team": "a"}, wantUnwritten: true,
		},
		"appeared with the same values: atoll's fields and record taken out again": {
			appeared: &corev1.ConfigMap{Data: map[string]string{"key": "atoll's", "theirs": "y"}},
			wantErr:  ownership.ErrExists,
			wantData: map[string]string{"key": "atoll's", "theirs": "y"},
		},
		"appeared with atoll's managed label set by its owner: the owner's label stays": {
			appeared: &corev1.ConfigMap{Data: map[string]string{"key": "atoll's"},
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{workv1alpha2.ManagedLabel: "true"}}},
			wantErr:  ownership.ErrExists,
			wantData: map[string]string{"key": "atoll's"}, wantLabels: map[string]string{workv1alpha2.ManagedLabel: "true"},
		},
	}
	names := caseNames(c, ns)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmName := names(t)
			var before *corev1.ConfigMap
			if tc.appeared != nil {
				before = tc.appeared.DeepCopy()
				before.Namespace, before.Name = ns, cmName
				if err := c.Create(ctx, before, client.FieldOwner("someone")); err != nil {
					t.Fatal(err)
				}
			}
			desired := desiredConfigMap(ns, cmName, map[string]any{"key": "atoll's", "atoll-only": "x"})

			created, err := ownership.Create(ctx, rc, gvr, desired, "atoll-test")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Create = %v, want %v", err, tc.wantErr)
			}
			got, err := ri.Get(ctx, cmName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == nil && (created == nil || created.GetUID() != got.GetUID()) {
				t.Fatalf("Create returned %v, want the created object", created)
			}
			data, _, _ := unstructured.NestedStringMap(got.Object, "data")
			if !maps.Equal(data, tc.wantData) || !maps.Equal(got.GetLabels(), tc.wantLabels) {
				t.Fatalf("object holds data %v, labels %v; want %v, %v", data, got.GetLabels(), tc.wantData, tc.wantLabels)
			}
			if _, owned := ownership.Of(got); owned != (tc.wantErr == nil) {
				t.Fatalf("ownership record present: %v, want %v (annotations %v)", owned, tc.wantErr == nil, got.GetAnnotations())
			}
			if before == nil {
				return
			}
			if tc.wantUnwritten && got.GetResourceVersion() != before.ResourceVersion {
				t.Errorf("a refused create wrote: resourceVersion %s -> %s", before.ResourceVersion, got.GetResourceVersion())
			}
			for _, e := range got.GetManagedFields() {
				if e.Manager == "atoll-test" {
					t.Errorf("atoll-test still owns fields of someone's object: %s", e.FieldsV1)
				}
			}
		})
	}
}

// TestCreateReleasesOnlyTheObjectItWroteInto follows ownership.Create on a
// real API server when the object that appeared is deleted, replaced or
// changed between Create's apply (answered 200: it was there) and the
// release that takes atoll's fields out of it again, or when that release
// fails. The moment is exact: the REST client's transport makes the
// change as the release's request is about to go out. The release must
// not create an object of its own (an empty ConfigMap nobody owns) nor
// write into the replacement, and when it fails the ownership record must
// still go, from the object's latest version.
func TestCreateReleasesOnlyTheObjectItWroteInto(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	const ns = "ownership-release"
	c, ri := configMapsIn(t, ns)
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	errReset := errors.New("connection reset by the test")

	cases := map[string]struct {
		// beforeRelease runs as the release's request is about to go out;
		// an error fails that request without sending it.
		beforeRelease func(t *testing.T, name string) error
		// wantAbsent: no object of that name afterwards; otherwise its data.
		wantAbsent bool
		wantData   map[string]string
		// wantUnwritten: the object keeps the resourceVersion beforeRelease left.
		wantUnwritten bool
	}{
		"deleted before the release: nothing created": {
			beforeRelease: func(t *testing.T, name string) error { deleteConfigMap(ctx, t, c, ns, name); return nil },
			wantAbsent:    true,
		},
		"replaced before the release: the replacement untouched": {
			beforeRelease: func(t *testing.T, name string) error {
				deleteConfigMap(ctx, t, c, ns, name)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"key": "another's"}}
				if err := c.Create(ctx, cm, client.FieldOwner("another")); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			wantData: map[string]string{"key": "another's"}, wantUnwritten: true,
		},
		"release fails: the ownership record still goes": {
			beforeRelease: func(*testing.T, string) error { return errReset },
			wantData:      map[string]string{"key": "atoll's", "theirs": "y", "atoll-only": "x"},
		},
		"release fails and the object changes: the record goes from its new version": {
			beforeRelease: func(t *testing.T, name string) error {
				cm := &corev1.ConfigMap{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
					t.Fatal(err)
				}
				cm.Data["theirs"] = "z"
				update(ctx, t, c, cm)
				return errReset
			},
			wantData: map[string]string{"key": "atoll's", "theirs": "z", "atoll-only": "x"},
		},
	}
	names := caseNames(c, ns)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmName := names(t)
			appeared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cmName},
				Data: map[string]string{"key": "atoll's", "theirs": "y"}}
			if err := c.Create(ctx, appeared, client.FieldOwner("someone")); err != nil {
				t.Fatal(err)
			}
			// rv is the resourceVersion beforeRelease left, if any.
			var rv string
			hook := &patchHook{before: func(n int) error {
				if n != 2 { // 1 is Create's apply, 2 its release
					return nil
				}
				err := tc.beforeRelease(t, cmName)
				if got, gerr := ri.Get(ctx, cmName, metav1.GetOptions{}); gerr == nil {
					rv = got.GetResourceVersion()
				}
				return err
			}}
			cfg := shared.RESTConfig(t)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { hook.next = rt; return hook })
			rc, err := ownership.RESTClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			desired := desiredConfigMap(ns, cmName, map[string]any{"key": "atoll's", "atoll-only": "x"})

			if _, err = ownership.Create(ctx, rc, gvr, desired, "atoll-test"); !errors.Is(err, ownership.ErrExists) {
				t.Fatalf("Create = %v, want %v", err, ownership.ErrExists)
			}
			got, err := ri.Get(ctx, cmName, metav1.GetOptions{})
			if tc.wantAbsent {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("an object is there after all: %v (err %v, managers %v)", got, err, managers(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedStringMap(got.Object, "data")
			if !maps.Equal(data, tc.wantData) {
				t.Fatalf("object holds %v, want %v", data, tc.wantData)
			}
			if _, owned := ownership.Of(got); owned {
				t.Fatalf("ownership record left on the object: labels %v, annotations %v", got.GetLabels(), got.GetAnnotations())
			}
			if tc.wantUnwritten && got.GetResourceVersion() != rv {
				t.Errorf("the replacement was written: resourceVersion %s -> %s, managers %v", rv, got.GetResourceVersion(), managers(got))
			}
		})
	}
}

// patchHook passes requests on to next, calling before(n) ahead of the
// n-th PATCH (from 1); an error from it fails that request unsent.
type patchHook struct {
	next    http.RoundTripper
	before  func(n int) error
	patches int
}

func (h *patchHook) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPatch {
		h.patches++
		if err := h.before(h.patches); err != nil {
			return nil, err
		}
	}
	return h.next.RoundTrip(req)
}

func deleteConfigMap(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// managers names the field managers of obj (nil: none).
func managers(obj *unstructured.Unstructured) []string {
	if obj == nil {
		return nil
	}
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	return out
}

// TestHandBackRemovesOnlyItsOwnRecord hands a ConfigMap back through
// ownership.HandBack, as the executor does when it keeps a member object
// (taken over, preserved, a CRD or namespace still in use) and as a
// create does with what appeared, from the copy read before something
// else happened to it, on a real API server. The record goes and nothing
// else changes; an object changed since is read again and its change
// kept; one whose record is another binding's by now, or that was
// replaced or deleted, is not written.
func TestHandBackRemovesOnlyItsOwnRecord(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	const ns = "ownership-handback"
	c, ri := configMapsIn(t, ns)
	labels, annotations := ownerRecord(ns)

	cases := map[string]struct {
		meanwhile func(t *testing.T, cm *corev1.ConfigMap)
		// wantHandedBack: HandBack removed the record; wantAbsent: no
		// object afterwards; wantValue and wantOwnedBy: what it holds.
		wantHandedBack bool
		wantAbsent     bool
		wantValue      string
		wantOwnedBy    string // the binding named by its record; "" none
	}{
		"unchanged: the record goes, the rest stays": {wantHandedBack: true, wantValue: "atoll's"},
		"changed since: the record goes from the new version, the change stays": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				cm.Data["key"] = "scaled"
				update(ctx, t, c, cm)
			},
			wantHandedBack: true, wantValue: "scaled",
		},
		"another binding's record by now: untouched": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				cm.Annotations[workv1alpha2.ResourceBindingNameAnnotation] = "other-deployment"
				update(ctx, t, c, cm)
			},
			wantValue: "atoll's", wantOwnedBy: "other-deployment",
		},
		"replaced by another of its name: untouched": {
			meanwhile: func(t *testing.T, cm *corev1.ConfigMap) {
				deleteConfigMap(ctx, t, c, ns, cm.Name)
				again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name, Labels: maps.Clone(labels),
					Annotations: maps.Clone(annotations)}, Data: map[string]string{"key": "again"}}
				if err := c.Create(ctx, again); err != nil {
					t.Fatal(err)
				}
			},
			wantValue: "again", wantOwnedBy: "web-deployment",
		},
		"deleted: nothing written": {
			meanwhile:  func(t *testing.T, cm *corev1.ConfigMap) { deleteConfigMap(ctx, t, c, ns, cm.Name) },
			wantAbsent: true,
		},
	}
	names := caseNames(c, ns)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmName := names(t)
			_, read := recordedCopy(ctx, t, c, ri, ns, cmName, tc.meanwhile)

			handedBack, err := ownership.HandBack(ctx, ri, read, "atoll-test")
			if err != nil || handedBack != tc.wantHandedBack {
				t.Fatalf("HandBack = %v, %v; want %v, nil", handedBack, err, tc.wantHandedBack)
			}
			got := &corev1.ConfigMap{}
			err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cmName}, got)
			if tc.wantAbsent {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("an object is there after all: %v (err %v)", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, owned := ownership.Of(got)
			if got.Data["key"] != tc.wantValue || owned != (tc.wantOwnedBy != "") || rec.Name != tc.wantOwnedBy {
				t.Fatalf("object holds %q, record %+v (present %v); want %q, owned by %q", got.Data["key"], rec, owned, tc.wantValue, tc.wantOwnedBy)
			}
		})
	}
}
