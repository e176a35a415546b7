// Package wire reads API responses with fewer passes over their JSON than
// client-go's codecs. client-go reads each watch event four times before
// the object is built: encoding/json's scanner frames it, a pass finds the
// event's apiVersion and kind and another decodes the event with its object
// copied as bytes, then the object's apiVersion and kind are found again
// and the object decoded, managedFields and all. At 100,000 templates that
// was 87 % of a restarted controller-manager's CPU, nearly all of it on
// ResourceBindings (design 0013, decision 21).
//
// Here a framer that tracks only strings and brackets cuts the stream, one
// scan of the event finds its type and object, and one scan of the object
// finds its apiVersion, kind and managedFields; the object is then decoded
// once, without managedFields (no atoll controller reads them, and they
// are half a binding's bytes). Everything is validated once, by the decode.
//
// The codecs only decode: a client built with them sends no bodies.
package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	kjson "sigs.k8s.io/json"

	"github.com/atoll-dev/atoll/pkg/util/jsonscan"
)

// ErrReadOnly is what the codecs' encoders return.
var ErrReadOnly = errors.New("wire: the codec only decodes")

// WatchEvents is the stream part of a JSON SerializerInfo whose watch
// events decode with WatchEventDecoder, framed by jsonscan.Framer.
func WatchEvents() *runtime.StreamSerializerInfo {
	return &runtime.StreamSerializerInfo{EncodesAsText: true, Serializer: WatchEventDecoder{}, Framer: jsonscan.Framer}
}

// WatchEventDecoder decodes a watch event into a *metav1.WatchEvent with
// its type and its object's bytes, which alias the event's: client-go's
// watch decoder decodes the object before it reads the next event.
type WatchEventDecoder struct{}

// Decode implements runtime.Decoder.
func (WatchEventDecoder) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	event, ok := into.(*metav1.WatchEvent)
	if !ok {
		return nil, nil, fmt.Errorf("wire: watch events decode into *metav1.WatchEvent, not %T", into)
	}
	event.Type, event.Object = "", runtime.RawExtension{}
	_, err := jsonscan.Object(data, 0, func(m jsonscan.Member) error {
		var err error
		switch {
		case m.KeyIs("type"):
			event.Type, err = eventType(data[m.Start:m.End])
		case m.KeyIs("object"):
			event.Object.Raw = data[m.Start:m.End]
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a watch event: %w", err)
	}
	return event, &schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "WatchEvent"}, nil
}

// Encode implements runtime.Encoder.
func (WatchEventDecoder) Encode(runtime.Object, io.Writer) error { return ErrReadOnly }

// Identifier implements runtime.Encoder.
func (WatchEventDecoder) Identifier() runtime.Identifier { return "atoll-watch-event-json" }

// eventType decodes an event's type, without allocating for the types
// Kubernetes sends.
func eventType(b []byte) (string, error) {
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if len(b) == len(t)+2 && b[0] == '"' && string(b[1:len(b)-1]) == string(t) {
			return string(t), nil
		}
	}
	return jsonscan.String(b)
}

// Serializer is a read-only JSON NegotiatedSerializer: responses decode
// with Objects, watch events with WatchEventDecoder (framed by
// jsonscan.Framer) and then their object with Objects.
type Serializer struct {
	Objects runtime.Serializer
}

// NewTypedSerializer returns the Serializer for the typed objects of
// scheme: objects and lists decode in one pass to the scheme's types, less
// managedFields; a metav1.Status (an error, a watch ERROR event) decodes to
// *metav1.Status. As client-go's decoders without conversion do, decoded
// objects carry no apiVersion and kind: the controller-runtime cache sets
// them on what it hands out.
//
// fast, when not nil, is tried first on each object the scheme makes (not
// on lists): it decodes data into the zero object and reports true, or
// reports false and the object is decoded as any other. It must give what
// the reflective decode gives, less managedFields, whenever it reports
// true.
func NewTypedSerializer(scheme *runtime.Scheme, fast Fast) Serializer {
	return Serializer{Objects: &typedDecoder{scheme: scheme, fast: fast}}
}

// Fast decodes an object's JSON without reflection when it can (see
// NewTypedSerializer); pkg/util/bindingjson's Decode is one.
type Fast func(data []byte, obj runtime.Object) bool

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (s Serializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       s.Objects,
		StreamSerializer: WatchEvents(),
	}}
}

// EncoderForVersion implements runtime.NegotiatedSerializer.
func (Serializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

// DecoderToVersion implements runtime.NegotiatedSerializer.
func (Serializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

type typedDecoder struct {
	scheme *runtime.Scheme
	fast   Fast
}

// scratch holds documents with managedFields cut out while they decode;
// the decoded objects copy what they keep.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 16*1024); return &b }}

// Decode implements runtime.Decoder. into, when given, is reset and
// filled; it must be of the document's kind.
func (d *typedDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	// The fast decoder needs no scan first when the type leads the
	// document, as API servers write it; what it declines is decoded as if
	// it had not been tried.
	if d.fast != nil {
		if apiVersion, kind, ok := leadingType(data); ok {
			obj, gvk, err := d.newObject(document{apiVersion: apiVersion, kind: kind}, defaults, into)
			if err == nil && gvk.Kind != "Status" && !strings.HasSuffix(gvk.Kind, "List") && d.fast(data, obj) {
				obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				return obj, gvk, nil
			}
		}
	}
	doc, err := scanDocument(data)
	if err != nil {
		return nil, nil, err
	}
	obj, gvk, err := d.newObject(doc, defaults, into)
	if err != nil {
		return nil, nil, err
	}
	if err := unmarshalWithout(data, doc.cuts, obj); err != nil {
		return nil, nil, fmt.Errorf("decoding %s: %w", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj, gvk, nil
}

// newObject returns the zero object doc's type (or defaults) names: into,
// reset, when given.
func (d *typedDecoder) newObject(doc document, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	gvk := schema.FromAPIVersionAndKind(doc.apiVersion, doc.kind)
	if defaults != nil {
		if gvk.Kind == "" {
			gvk.Kind = defaults.Kind
		}
		if doc.apiVersion == "" {
			gvk.Group, gvk.Version = defaults.Group, defaults.Version
		}
	}
	if gvk.Kind == "" {
		return nil, nil, errors.New("wire: decoding an object with no kind")
	}
	switch {
	case gvk.Kind == "Status" && (doc.apiVersion == "v1" || doc.apiVersion == ""):
		gvk = metav1.SchemeGroupVersion.WithKind("Status")
		return &metav1.Status{}, &gvk, nil
	case into != nil:
		kinds, _, err := d.scheme.ObjectKinds(into)
		if err != nil {
			return nil, nil, err
		}
		if !hasKind(kinds, gvk) {
			return nil, nil, fmt.Errorf("wire: decoding %s into %T", gvk, into)
		}
		reflect.ValueOf(into).Elem().SetZero()
		return into, &gvk, nil
	}
	obj, err := d.scheme.New(gvk)
	if err != nil {
		return nil, nil, err
	}
	return obj, &gvk, nil
}

// leadingType returns the apiVersion and kind of the object data when
// they are its first two members, plain strings, in either order.
func leadingType(data []byte) (apiVersion, kind string, ok bool) {
	i := jsonscan.Space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", "", false
	}
	i = jsonscan.Space(data, i+1)
	var haveVersion, haveKind bool
	for range 2 {
		key, next, ok := plainString(data, i)
		if !ok {
			return "", "", false
		}
		i = jsonscan.Space(data, next)
		if i >= len(data) || data[i] != ':' {
			return "", "", false
		}
		value, next, ok := plainString(data, jsonscan.Space(data, i+1))
		if !ok {
			return "", "", false
		}
		switch {
		case string(key) == "apiVersion" && !haveVersion:
			apiVersion, haveVersion = string(value), true
		case string(key) == "kind" && !haveKind:
			kind, haveKind = string(value), true
		default:
			return "", "", false
		}
		i = jsonscan.Space(data, next)
		if i >= len(data) || data[i] != ',' {
			return "", "", false
		}
		i = jsonscan.Space(data, i+1)
	}
	return apiVersion, kind, true
}

// plainString returns what is between the quotes of the string at data[i]
// when it has no escapes, and the index past it.
func plainString(data []byte, i int) (inner []byte, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	end, err := jsonscan.StringEnd(data, i)
	if err != nil || bytes.IndexByte(data[i:end], '\\') >= 0 {
		return nil, 0, false
	}
	return data[i+1 : end-1], end, true
}

func hasKind(kinds []schema.GroupVersionKind, gvk schema.GroupVersionKind) bool {
	for _, k := range kinds {
		if k == gvk {
			return true
		}
	}
	return false
}

// unmarshalWithout decodes data less the extents in cuts into obj.
func unmarshalWithout(data []byte, cuts [][2]int, obj runtime.Object) error {
	if len(cuts) == 0 {
		return kjson.UnmarshalCaseSensitivePreserveInts(data, obj)
	}
	bp := scratch.Get().(*[]byte)
	b := (*bp)[:0]
	at := 0
	for _, c := range cuts {
		b = append(b, data[at:c[0]]...)
		at = c[1]
	}
	b = append(b, data[at:]...)
	err := kjson.UnmarshalCaseSensitivePreserveInts(b, obj)
	if cap(b) <= 4<<20 { // a rare huge document is not kept
		*bp = b[:0]
		scratch.Put(bp)
	}
	return err
}

// Encode implements runtime.Encoder.
func (*typedDecoder) Encode(runtime.Object, io.Writer) error { return ErrReadOnly }

// Identifier implements runtime.Encoder.
func (*typedDecoder) Identifier() runtime.Identifier { return "atoll-typed-json" }

// document is what one scan finds in an object or list.
type document struct {
	apiVersion, kind string
	// cuts are the extents of the managedFields members of the object's
	// metadata or of each list item's, in document order.
	cuts [][2]int
}

func scanDocument(data []byte) (document, error) {
	var doc document
	var items []jsonscan.Member
	_, err := jsonscan.Object(data, 0, func(m jsonscan.Member) error {
		var err error
		switch {
		case m.KeyIs("apiVersion"):
			doc.apiVersion, err = jsonscan.String(data[m.Start:m.End])
		case m.KeyIs("kind"):
			doc.kind, err = jsonscan.String(data[m.Start:m.End])
		case m.KeyIs("metadata"):
			err = doc.cutManagedFields(data, m.Start)
		case m.KeyIs("items"):
			items = append(items, m)
		}
		return err
	})
	if err != nil {
		return doc, fmt.Errorf("wire: %w", err)
	}
	// A list's items come after its metadata or before it (custom
	// resources' keys are sorted); they are cut in document order.
	if len(items) == 1 && strings.HasSuffix(doc.kind, "List") && data[items[0].Start] == '[' {
		var itemCuts [][2]int
		_, err := jsonscan.Array(data, items[0].Start, func(s, _ int) error {
			if data[s] != '{' {
				return nil
			}
			item := document{}
			_, err := jsonscan.Object(data, s, func(m jsonscan.Member) error {
				if m.KeyIs("metadata") {
					return item.cutManagedFields(data, m.Start)
				}
				return nil
			})
			itemCuts = append(itemCuts, item.cuts...)
			return err
		})
		if err != nil {
			return doc, fmt.Errorf("wire: items: %w", err)
		}
		doc.cuts = mergeCuts(doc.cuts, itemCuts)
	}
	return doc, nil
}

// cutManagedFields adds the extent of the managedFields member of the
// metadata object at data[start] (when it is an object that has one).
func (doc *document) cutManagedFields(data []byte, start int) error {
	if data[start] != '{' {
		return nil
	}
	var managed *jsonscan.Member
	end, err := jsonscan.Object(data, start, func(m jsonscan.Member) error {
		if m.KeyIs("managedFields") {
			managed = &m
		}
		return nil
	})
	if err != nil || managed == nil {
		return err
	}
	s, e := jsonscan.Cut(data, start, end, *managed)
	doc.cuts = append(doc.cuts, [2]int{s, e})
	return nil
}

// mergeCuts merges two lists of extents, each in order and not
// overlapping the other.
func mergeCuts(a, b [][2]int) [][2]int {
	if len(a) == 0 {
		return b
	}
	out := make([][2]int, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0][0] < b[0][0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// NewTypedClient returns a REST client for gv's resources on cfg's API
// server, over httpClient, whose responses decode with scheme's
// typed Serializer (NewTypedSerializer, with fast). cfg is not changed.
func NewTypedClient(cfg *rest.Config, httpClient *http.Client, gv schema.GroupVersion, scheme *runtime.Scheme, fast Fast) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = NewTypedSerializer(scheme, fast)
	return rest.RESTClientForConfigAndClient(cfg, httpClient)
}

// NewListWatch returns the ListerWatcher of resource (every namespace)
// through client, whose lists decode into what newList returns. It asks
// for what an informer's ListerWatcher is asked for, as client-go's and
// controller-runtime's do.
func NewListWatch(client rest.Interface, resource string, newList func() runtime.Object, params runtime.ParameterCodec) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := newList()
			if err := client.Get().Resource(resource).VersionedParams(&opts, params).Do(ctx).Into(list); err != nil {
				return nil, err
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return client.Get().Resource(resource).VersionedParams(&opts, params).Watch(ctx)
		},
	}
}
