// Package bindingjson decodes ResourceBindings and ClusterResourceBindings
// from JSON without reflection, for the informers that hold one binding
// per template (pkg/util/wire). At 100,000 templates a restarted
// controller-manager decodes 100,000 bindings before it is ready, and the
// reflective decoder (sigs.k8s.io/json, a fork of encoding/json) was the
// largest part of that CPU: it reads each document twice, once to validate
// and once to decode, and builds every string and value through reflect.
//
// Decode knows the members bindings carry; it gives exactly what the
// reflective decoder gives for them (FuzzDecode checks it) and declines
// anything else: a member it does not know, a key written twice or with
// escapes, a null where a value is expected, a number it does not read as
// encoding/json would, invalid JSON. A declined document is decoded by the
// reflective decoder, which gives the result or the error; Decode never
// gives a different answer, only sometimes none. Rare members whose types
// are large (placement, failover, replica requirements) are decoded by the
// reflective decoder on their own bytes.
package bindingjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/jsonscan"
)

// Decode decodes data into obj, a zero *ResourceBinding or
// *ClusterResourceBinding, as sigs.k8s.io/json's
// UnmarshalCaseSensitivePreserveInts would, less metadata.managedFields,
// and reports whether it did. When it reports false, obj may be partly
// filled: reset it before decoding data another way. Any other obj is
// not decoded here.
func Decode(data []byte, obj runtime.Object) bool {
	d := decoder{b: data}
	d.space()
	var ok bool
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		ok = d.binding(&b.TypeMeta, &b.ObjectMeta, &b.Spec, &b.Status)
	case *workv1alpha2.ClusterResourceBinding:
		ok = d.binding(&b.TypeMeta, &b.ObjectMeta, &b.Spec, &b.Status)
	default:
		return false
	}
	// Nothing but whitespace may follow the object, as for encoding/json.
	d.space()
	return ok && d.i == len(data)
}

// decoder reads one value at a time from b[i:], each once. Every method
// that reads a value starts at its first byte and leaves i just past it;
// false means the document is declined.
type decoder struct {
	b []byte
	i int
}

func (d *decoder) space() { d.i = jsonscan.Space(d.b, d.i) }

func (d *decoder) at(c byte) bool { return d.i < len(d.b) && d.b[d.i] == c }

// null reads a null if one is next.
func (d *decoder) null() bool {
	if d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// object reads an object, calling fn with the index in keys of each
// member's key, at the member's value. It declines a key not in keys, a
// key twice, a key with escapes, or fn's false. keys has at most 64
// entries.
func (d *decoder) object(keys []string, fn func(key int) bool) bool {
	var seen uint64
	return d.members(func(key []byte) bool {
		k := indexOf(keys, key)
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		return fn(k)
	})
}

// members reads an object, calling fn with each member's key as written
// (escapes not decoded), at the member's value.
func (d *decoder) members(fn func(key []byte) bool) bool {
	if !d.at('{') {
		return false
	}
	d.i++
	d.space()
	if d.at('}') {
		d.i++
		return true
	}
	for {
		if !d.at('"') {
			return false
		}
		end, err := jsonscan.StringEnd(d.b, d.i)
		if err != nil {
			return false
		}
		key := d.b[d.i+1 : end-1]
		d.i = jsonscan.Space(d.b, end)
		if !d.at(':') {
			return false
		}
		d.i++
		d.space()
		if !fn(key) {
			return false
		}
		next, closed, err := jsonscan.Separator(d.b, d.i, '}')
		if err != nil {
			return false
		}
		d.i = next
		if closed {
			return true
		}
	}
}

// array reads a list, calling fn at each element with its index after
// growing the list by one with grow. [] is an empty list (empty is
// called), null leaves it as it is.
func (d *decoder) array(empty func(), grow func(), fn func(i int) bool) bool {
	if d.null() {
		return true
	}
	if !d.at('[') {
		return false
	}
	empty()
	d.i++
	d.space()
	if d.at(']') {
		d.i++
		return true
	}
	for n := 0; ; n++ {
		grow()
		if !fn(n) {
			return false
		}
		next, closed, err := jsonscan.Separator(d.b, d.i, ']')
		if err != nil {
			return false
		}
		d.i = next
		if closed {
			return true
		}
	}
}

// skip reads any value and returns its extent.
func (d *decoder) skip() (start, end int, ok bool) {
	start = d.i
	end, err := jsonscan.Skip(d.b, d.i)
	if err != nil {
		return 0, 0, false
	}
	d.i = end
	return start, end, true
}

// stringMap reads a map[string]string: {} is an empty map, null none.
func (d *decoder) stringMap(into *map[string]string) bool {
	if d.null() {
		return true
	}
	m := map[string]string{}
	if !d.members(func(key []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return false
		}
		var v string
		if !d.str(&v) {
			return false
		}
		m[string(key)] = v
		return true
	}) {
		return false
	}
	*into = m
	return true
}

// quoted reads a string and returns what is between its quotes, and
// whether that is the string itself (no escapes, valid UTF-8).
func (d *decoder) quoted() (inner []byte, plain, ok bool) {
	if !d.at('"') {
		return nil, false, false
	}
	end, err := jsonscan.StringEnd(d.b, d.i)
	if err != nil {
		return nil, false, false
	}
	inner = d.b[d.i+1 : end-1]
	d.i = end
	return inner, bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner), true
}

// str reads a string; null leaves into as it is, as encoding/json does.
// Escapes and invalid UTF-8 (which encoding/json replaces) go through
// encoding/json.
func (d *decoder) str(into *string) bool {
	if d.null() {
		return true
	}
	start := d.i
	inner, plain, ok := d.quoted()
	if !ok {
		return false
	}
	if plain {
		*into = string(inner)
		return true
	}
	return json.Unmarshal(d.b[start:d.i], into) == nil
}

// integer reads a JSON integer as encoding/json decodes one into an
// integer of bits bits: digits only (no fraction or exponent), in range.
func (d *decoder) integer(bits int) (int64, bool) {
	start := d.i
	if d.at('-') {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || (n > 1 && d.b[digits] == '0') {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, bits)
	return v, err == nil
}

// int64 and int32 read integers; null leaves into as it is.
func (d *decoder) int64(into *int64) bool {
	if d.null() {
		return true
	}
	v, ok := d.integer(64)
	*into = v
	return ok
}

func (d *decoder) int32(into *int32) bool {
	if d.null() {
		return true
	}
	v, ok := d.integer(32)
	*into = int32(v)
	return ok
}

// boolean reads true or false; null leaves into as it is.
func (d *decoder) boolean(into *bool) bool {
	for _, lit := range []struct {
		word string
		v    bool
	}{{"true", true}, {"false", false}} {
		if d.i+len(lit.word) <= len(d.b) && string(d.b[d.i:d.i+len(lit.word)]) == lit.word {
			d.i += len(lit.word)
			*into = lit.v
			return true
		}
	}
	return d.null()
}

// boolPtr reads a *bool: null makes it nil.
func (d *decoder) boolPtr(into **bool) bool {
	if d.null() {
		*into = nil
		return true
	}
	var v bool
	if !d.boolean(&v) {
		return false
	}
	*into = &v
	return true
}

// time reads a metav1.Time as its UnmarshalJSON does (null is the zero
// time; otherwise RFC 3339, in the local zone).
func (d *decoder) time(into *metav1.Time) bool {
	if d.null() {
		into.Time = time.Time{}
		return true
	}
	start := d.i
	inner, plain, ok := d.quoted()
	if !ok {
		return false
	}
	if !plain {
		return into.UnmarshalJSON(d.b[start:d.i]) == nil
	}
	t, err := time.Parse(time.RFC3339, string(inner))
	if err != nil {
		return false
	}
	into.Time = t.Local()
	return true
}

// timePtr reads a *metav1.Time: null makes it nil.
func (d *decoder) timePtr(into **metav1.Time) bool {
	if d.null() {
		*into = nil
		return true
	}
	t := &metav1.Time{}
	if !d.time(t) {
		return false
	}
	*into = t
	return true
}

// reflective reads an object of a large, rarely varying type with the
// reflective decoder, on its own bytes: null makes the pointer nil.
func reflective[T any](d *decoder, into **T) bool {
	if d.null() {
		*into = nil
		return true
	}
	if !d.at('{') {
		return false
	}
	s, e, ok := d.skip()
	if !ok {
		return false
	}
	v := new(T)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(d.b[s:e], v); err != nil {
		return false
	}
	*into = v
	return true
}

var (
	topKeys  = []string{"apiVersion", "kind", "metadata", "spec", "status"}
	metaKeys = []string{"name", "generateName", "namespace", "uid", "resourceVersion", "generation",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
		"ownerReferences", "finalizers", "managedFields"}
	ownerKeys = []string{"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
	specKeys  = []string{"resource", "propagateDeps", "replicaRequirements", "replicas", "clusters", "placement",
		"schedulerName", "failover", "conflictResolution", "rescheduleTriggeredAt", "preserveResourcesOnDeletion"}
	resourceKeys  = []string{"apiVersion", "kind", "namespace", "name", "uid", "resourceVersion"}
	clusterKeys   = []string{"name", "replicas"}
	statusKeys    = []string{"schedulerObservedGeneration", "schedulerObservingAffinityName", "lastScheduledTime", "conditions", "aggregatedStatus"}
	conditionKeys = []string{"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"}
	itemKeys      = []string{"clusterName", "status", "applied", "appliedMessage", "health"}
)

func (d *decoder) binding(tm *metav1.TypeMeta, meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	return d.object(topKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&tm.APIVersion)
		case 1:
			return d.str(&tm.Kind)
		case 2:
			return d.null() || d.metadata(meta)
		case 3:
			return d.null() || d.spec(spec)
		default:
			return d.null() || d.status(status)
		}
	})
}

func (d *decoder) metadata(m *metav1.ObjectMeta) bool {
	return d.object(metaKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&m.Name)
		case 1:
			return d.str(&m.GenerateName)
		case 2:
			return d.str(&m.Namespace)
		case 3:
			return named(d, &m.UID)
		case 4:
			return d.str(&m.ResourceVersion)
		case 5:
			return d.int64(&m.Generation)
		case 6:
			return d.time(&m.CreationTimestamp)
		case 7:
			return d.timePtr(&m.DeletionTimestamp)
		case 8:
			if d.null() {
				m.DeletionGracePeriodSeconds = nil
				return true
			}
			var v int64
			if !d.int64(&v) {
				return false
			}
			m.DeletionGracePeriodSeconds = &v
			return true
		case 9:
			return d.stringMap(&m.Labels)
		case 10:
			return d.stringMap(&m.Annotations)
		case 11:
			return d.array(func() { m.OwnerReferences = []metav1.OwnerReference{} },
				func() { m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{}) },
				func(i int) bool { return d.ownerReference(&m.OwnerReferences[i]) })
		case 12:
			return d.array(func() { m.Finalizers = []string{} },
				func() { m.Finalizers = append(m.Finalizers, "") },
				func(i int) bool { return d.str(&m.Finalizers[i]) })
		default:
			// managedFields: left out, as the wire decoder cuts them
			// whatever they hold; only a list or null is taken here.
			if d.null() {
				return true
			}
			if !d.at('[') {
				return false
			}
			_, _, ok := d.skip()
			return ok
		}
	})
}

// named reads a string into a string type of its own (a UID, a
// condition status, …), as str does.
func named[T ~string](d *decoder, into *T) bool {
	v := string(*into)
	ok := d.str(&v)
	*into = T(v)
	return ok
}

func (d *decoder) ownerReference(o *metav1.OwnerReference) bool {
	return d.object(ownerKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&o.APIVersion)
		case 1:
			return d.str(&o.Kind)
		case 2:
			return d.str(&o.Name)
		case 3:
			return named(d, &o.UID)
		case 4:
			return d.boolPtr(&o.Controller)
		default:
			return d.boolPtr(&o.BlockOwnerDeletion)
		}
	})
}

func (d *decoder) spec(spec *workv1alpha2.ResourceBindingSpec) bool {
	return d.object(specKeys, func(k int) bool {
		switch k {
		case 0:
			return d.null() || d.resource(&spec.Resource)
		case 1:
			return d.boolean(&spec.PropagateDeps)
		case 2:
			return reflective(d, &spec.ReplicaRequirements)
		case 3:
			return d.int32(&spec.Replicas)
		case 4:
			return d.array(func() { spec.Clusters = []workv1alpha2.TargetCluster{} },
				func() { spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{}) },
				func(i int) bool {
					c := &spec.Clusters[i]
					return d.object(clusterKeys, func(k int) bool {
						if k == 0 {
							return d.str(&c.Name)
						}
						return d.int32(&c.Replicas)
					})
				})
		case 5:
			return reflective[policyv1alpha1.Placement](d, &spec.Placement)
		case 6:
			return d.str(&spec.SchedulerName)
		case 7:
			return reflective[policyv1alpha1.FailoverBehavior](d, &spec.Failover)
		case 8:
			return named(d, &spec.ConflictResolution)
		case 9:
			return d.timePtr(&spec.RescheduleTriggeredAt)
		default:
			return d.boolPtr(&spec.PreserveResourcesOnDeletion)
		}
	})
}

func (d *decoder) resource(r *workv1alpha2.ObjectReference) bool {
	return d.object(resourceKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&r.APIVersion)
		case 1:
			return d.str(&r.Kind)
		case 2:
			return d.str(&r.Namespace)
		case 3:
			return d.str(&r.Name)
		case 4:
			return named(d, &r.UID)
		default:
			return d.str(&r.ResourceVersion)
		}
	})
}

func (d *decoder) status(st *workv1alpha2.ResourceBindingStatus) bool {
	return d.object(statusKeys, func(k int) bool {
		switch k {
		case 0:
			return d.int64(&st.SchedulerObservedGeneration)
		case 1:
			return d.str(&st.SchedulerObservedAffinityName)
		case 2:
			return d.timePtr(&st.LastScheduledTime)
		case 3:
			return d.array(func() { st.Conditions = []metav1.Condition{} },
				func() { st.Conditions = append(st.Conditions, metav1.Condition{}) },
				func(i int) bool { return d.condition(&st.Conditions[i]) })
		default:
			return d.array(func() { st.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{} },
				func() { st.AggregatedStatus = append(st.AggregatedStatus, workv1alpha2.AggregatedStatusItem{}) },
				func(i int) bool { return d.aggregatedItem(&st.AggregatedStatus[i]) })
		}
	})
}

func (d *decoder) condition(c *metav1.Condition) bool {
	return d.object(conditionKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&c.Type)
		case 1:
			return named(d, &c.Status)
		case 2:
			return d.int64(&c.ObservedGeneration)
		case 3:
			return d.time(&c.LastTransitionTime)
		case 4:
			return d.str(&c.Reason)
		default:
			return d.str(&c.Message)
		}
	})
}

func (d *decoder) aggregatedItem(a *workv1alpha2.AggregatedStatusItem) bool {
	return d.object(itemKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&a.ClusterName)
		case 1:
			// A RawExtension keeps the value's bytes as they are written
			// (runtime.RawExtension.UnmarshalJSON); null makes it nil.
			// The reflective decoder validates them first; jsonscan checks
			// only their brackets and strings.
			if d.null() {
				a.Status = nil
				return true
			}
			s, e, ok := d.skip()
			if !ok || !json.Valid(d.b[s:e]) {
				return false
			}
			a.Status = &runtime.RawExtension{Raw: bytes.Clone(d.b[s:e])}
			return true
		case 2:
			return d.boolean(&a.Applied)
		case 3:
			return d.str(&a.AppliedMessage)
		default:
			return named(d, &a.Health)
		}
	})
}

func indexOf(keys []string, key []byte) int {
	for i, k := range keys {
		if string(key) == k {
			return i
		}
	}
	return -1
}
