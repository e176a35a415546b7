package clustercache

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/atoll-dev/atoll/pkg/util/intern"
	"github.com/atoll-dev/atoll/pkg/util/jsonpack"
	"github.com/atoll-dev/atoll/pkg/util/jsonscan"
	"github.com/atoll-dev/atoll/pkg/util/wire"
)

// The member informers read the members' JSON straight into Objects.
// client-go's path (the dynamic client's decoder, then the transform) read
// each watch event about five times and built the whole object as nested
// maps only to marshal it again without managedFields: at 20,000 templates
// it was a third of a restart's CPU (design 0013, "Where a 20,000-template
// restart spends its CPU"). Here one pass over the event finds its type and
// object, one over the object finds its apiVersion, kind and metadata, and
// only the metadata fields an Object keeps are decoded; the object goes
// into jsonpack as the member wrote it, less managedFields.

// decodeObject returns the Object for one member object's JSON. The result
// does not share memory with raw.
func decodeObject(raw []byte) (*Object, error) {
	return decodeTypedObject(raw, metav1.TypeMeta{})
}

// decodeTypedObject is decodeObject for an object that may carry no
// apiVersion and kind (a list's item): it gets those of typ, in its
// metadata and in its JSON.
func decodeTypedObject(raw []byte, typ metav1.TypeMeta) (*Object, error) {
	raw = raw[jsonscan.Space(raw, 0):] // so that raw[0] is '{' below
	o := &Object{}
	metaStart := -1
	_, err := jsonscan.Object(raw, 0, func(m jsonscan.Member) error {
		var err error
		switch {
		case m.KeyIs("apiVersion"):
			o.APIVersion, err = jsonscan.String(raw[m.Start:m.End])
			o.APIVersion = intern.Default.String(o.APIVersion)
		case m.KeyIs("kind"):
			o.Kind, err = jsonscan.String(raw[m.Start:m.End])
			o.Kind = intern.Default.String(o.Kind)
		case m.KeyIs("metadata"):
			metaStart = m.Start
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("decoding member object: %w", err)
	}
	if metaStart < 0 || raw[metaStart] != '{' {
		return nil, fmt.Errorf("decoding member object: no metadata object")
	}
	cutStart, cutEnd, err := o.decodeMetadata(raw, metaStart)
	if err != nil {
		return nil, fmt.Errorf("decoding metadata of member %s %s/%s: %w", o.Kind, o.namespace, o.name, err)
	}
	if cutStart < 0 {
		cutStart, cutEnd = len(raw), len(raw)
	}
	var typePrefix []byte
	if o.APIVersion == "" && o.Kind == "" && typ.Kind != "" {
		o.TypeMeta = typ
		apiVersion, _ := json.Marshal(typ.APIVersion) // strings always encode
		kind, _ := json.Marshal(typ.Kind)
		typePrefix = fmt.Appendf(nil, `"apiVersion":%s,"kind":%s,`, apiVersion, kind)
	}
	// raw starts with '{' (jsonscan checked) and has a metadata member, so
	// a member can go right after it.
	o.packed = jsonpack.Pack(o.Kind, jsonpack.Server, raw[:1], typePrefix, raw[1:cutStart], raw[cutEnd:])
	return o, nil
}

// decodeMetadata sets o's metadata from the object that starts at
// raw[start], and returns the extent of its managedFields member with one
// of the commas beside it (-1, -1 when it has none).
func (o *Object) decodeMetadata(raw []byte, start int) (cutStart, cutEnd int, err error) {
	var managedFields *jsonscan.Member
	end, err := jsonscan.Object(raw, start, func(m jsonscan.Member) error {
		value := raw[m.Start:m.End]
		var err error
		switch {
		case m.KeyIs("name"):
			o.name, err = jsonscan.String(value)
		case m.KeyIs("namespace"):
			o.namespace, err = jsonscan.String(value)
			o.namespace = intern.Default.String(o.namespace)
		case m.KeyIs("uid"):
			var uid string
			uid, err = jsonscan.String(value)
			o.uid = types.UID(uid)
		case m.KeyIs("resourceVersion"):
			o.resourceVersion, err = jsonscan.String(value)
		case m.KeyIs("generation"):
			if string(value) != "null" {
				o.generation, err = strconv.ParseInt(string(value), 10, 64)
			}
		case m.KeyIs("deletionTimestamp"):
			if string(value) != "null" {
				t := &metav1.Time{}
				if err = t.UnmarshalJSON(value); err == nil {
					o.deletionTimestamp = t
				}
			}
		case m.KeyIs("annotations"):
			err = o.keepAnnotations(value)
		case m.KeyIs("managedFields"):
			managedFields = &m
		}
		if err != nil {
			return fmt.Errorf("metadata.%s: %w", m.Key, err)
		}
		return nil
	})
	if err != nil || managedFields == nil {
		return -1, -1, err
	}
	cutStart, cutEnd = jsonscan.Cut(raw, start, end, *managedFields)
	return cutStart, cutEnd, nil
}

// keepAnnotations keeps, of the annotations object a, the values of
// OwnerAnnotations, and whether it marks the end of a watch's initial
// events.
func (o *Object) keepAnnotations(a []byte) error {
	if string(a) == "null" {
		return nil
	}
	_, err := jsonscan.Object(a, 0, func(m jsonscan.Member) error {
		if a[m.Start] != '"' {
			return nil // not a string: not an annotation atoll wrote
		}
		for i, k := range OwnerAnnotations {
			if m.KeyIs(k) {
				v, err := jsonscan.String(a[m.Start:m.End])
				if k == OwnerAnnotations[0] {
					v = intern.Default.String(v)
				}
				o.owner[i] = v
				return err
			}
		}
		if m.KeyIs(metav1.InitialEventsAnnotationKey) {
			v, err := jsonscan.String(a[m.Start:m.End])
			o.initialEventsEnd = v == "true"
			return err
		}
		return nil
	})
	return err
}

// ObjectList is a member's list of objects, as the member informers list
// them when the member does not stream its initial list.
type ObjectList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []Object
}

// DeepCopyObject implements runtime.Object.
func (l *ObjectList) DeepCopyObject() runtime.Object {
	c := &ObjectList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Object, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Object)
	}
	return c
}

// NewWireClient returns a client for cfg's API server whose responses
// decode as the member informers' do: objects to *Object, lists to
// *ObjectList, watch events with their object as bytes (see
// wireSerializer). cfg is not changed.
func NewWireClient(cfg *rest.Config) (rest.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = wireSerializer
	return rest.UnversionedRESTClientFor(cfg)
}

// ListObjects lists, through a client from NewWireClient, the objects of
// gvr in every namespace that opts select (one page when opts.Limit is
// set; the list's Continue names the next). kind is the items' kind; ""
// takes it from the list's ("ConfigMapList" holds ConfigMaps), which is
// wrong for a custom resource whose listKind is not its kind + "List".
func ListObjects(ctx context.Context, c rest.Interface, gvr schema.GroupVersionResource, kind string, opts metav1.ListOptions) (*ObjectList, error) {
	res := c.Get().AbsPath(resourcePath(gvr)...).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.Unversioned).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	raw, err := res.Raw()
	if err != nil {
		return nil, err
	}
	return decodeList(raw, kind)
}

// resourcePath is the API path of gvr's collection across namespaces.
func resourcePath(gvr schema.GroupVersionResource) []string {
	if gvr.Group == "" {
		return []string{"api", gvr.Version, gvr.Resource}
	}
	return []string{"apis", gvr.Group, gvr.Version, gvr.Resource}
}

// decodeList returns the ObjectList for a list response. List items carry
// no apiVersion and kind; they get the list's apiVersion and kind (or, when
// kind is "", the list's kind less "List").
func decodeList(raw []byte, kind string) (*ObjectList, error) {
	l := &ObjectList{}
	var items [][2]int
	_, err := jsonscan.Object(raw, 0, func(m jsonscan.Member) error {
		value := raw[m.Start:m.End]
		var err error
		switch {
		case m.KeyIs("apiVersion"):
			l.APIVersion, err = jsonscan.String(value)
		case m.KeyIs("kind"):
			l.Kind, err = jsonscan.String(value)
		case m.KeyIs("metadata"):
			err = json.Unmarshal(value, &l.ListMeta)
		case m.KeyIs("items"):
			if string(value) == "null" {
				return nil
			}
			_, err = jsonscan.Array(raw, m.Start, func(start, end int) error {
				items = append(items, [2]int{start, end})
				return nil
			})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	if kind == "" {
		kind = strings.TrimSuffix(l.Kind, "List")
	}
	typ := metav1.TypeMeta{APIVersion: intern.Default.String(l.APIVersion), Kind: intern.Default.String(kind)}
	l.Items = make([]Object, len(items))
	for i, it := range items {
		o, err := decodeTypedObject(raw[it[0]:it[1]], typ)
		if err != nil {
			return nil, fmt.Errorf("decoding list item %d: %w", i, err)
		}
		l.Items[i] = *o
	}
	return l, nil
}

// wireSerializer is the member informers' client codec: JSON only, read
// only. Single objects decode to *Object (a *metav1.Status when the member
// answers with one, as for errors and watch ERROR events) and watch events
// to metav1.WatchEvent with the object left as bytes for it.
var wireSerializer = wire.Serializer{Objects: objectCodec{}}

type objectCodec struct{}

func (objectCodec) Decode(data []byte, _ *schema.GroupVersionKind, _ runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if isStatus(data) {
		s := &metav1.Status{}
		if err := json.Unmarshal(data, s); err != nil {
			return nil, nil, fmt.Errorf("decoding a member's Status: %w", err)
		}
		return s, &schema.GroupVersionKind{Version: "v1", Kind: "Status"}, nil
	}
	o, err := decodeObject(data)
	if err != nil {
		return nil, nil, err
	}
	gvk := o.GroupVersionKind()
	return o, &gvk, nil
}

func (objectCodec) Encode(runtime.Object, io.Writer) error { return wire.ErrReadOnly }

func (objectCodec) Identifier() runtime.Identifier { return "atoll-member-object-json" }

// isStatus reports whether data is a metav1.Status: kind Status, and an
// apiVersion of v1 or none (old servers omit it).
func isStatus(data []byte) bool {
	var kind, apiVersion string
	_, _ = jsonscan.Object(data, 0, func(m jsonscan.Member) error {
		switch {
		case m.KeyIs("kind"):
			kind, _ = jsonscan.String(data[m.Start:m.End])
		case m.KeyIs("apiVersion"):
			apiVersion, _ = jsonscan.String(data[m.Start:m.End])
		}
		return nil
	})
	return kind == "Status" && (apiVersion == "v1" || apiVersion == "")
}
