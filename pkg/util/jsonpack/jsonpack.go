// Package jsonpack keeps JSON documents that are held long and read rarely
// (member copies in the executor's informers, template bytes) compressed
// in memory. Kubernetes objects are small (one to a few KB) and alike, so
// plain DEFLATE gains little on one of them alone; a preset dictionary of
// the text they share (field names, defaults, atoll's labels and
// annotations) lets each object be stored as little more than what makes
// it different.
//
// DEFLATE is klauspost/compress's: its writer starts a document without
// clearing hash tables (Go's clears 640 KB per document, a third of the
// time a member Deployment took to pack), and it reads a dictionary faster.
package jsonpack

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Form is how a document's object keys are ordered.
type Form int

const (
	// Sorted: as unstructured.MarshalJSON and json.Marshal of a map write
	// them (templates).
	Sorted Form = iota
	// Server: in Go struct order, as a kube-apiserver writes them (member
	// copies, read straight off the watch).
	Server
)

// The first byte of a packed document says how the rest is stored: as it
// is (stored), or DEFLATE with the dictionary of encodings[byte-1].
const stored byte = 0

// encodings are the dictionaries, each for a kind in one form; the last
// is for every other document.
var encodings = []struct {
	kind string
	form Form
	dict []byte
}{
	{"ConfigMap", Sorted, configMapsSorted},
	{"ConfigMap", Server, configMapsServer},
	{"Deployment", Sorted, deploymentsSorted},
	{"Deployment", Server, deploymentsServer},
	{"", Sorted, general},
}

// encodingFor picks the dictionary for a document of kind in form.
func encodingFor(kind string, form Form) byte {
	for i, e := range encodings {
		if (e.kind == kind && e.form == form) || e.kind == "" {
			return byte(i + 1)
		}
	}
	return byte(len(encodings)) // not reached: the last matches any kind
}

// Pack returns the concatenation of parts compressed, with the dictionary
// for a document of kind in form (any kind packs, "" included; the
// dictionary only decides how small). It never fails: data that does not
// compress is kept as it is, behind one byte.
func Pack(kind string, form Form, parts ...[]byte) []byte {
	encoding := encodingFor(kind, form)
	w := writers.Get().(*writer)
	defer writers.Put(w)
	w.buf.Reset()
	w.buf.WriteByte(encoding)
	w.fw.ResetDict(&w.buf, encodings[encoding-1].dict)
	n := 0
	var err error
	for _, p := range parts {
		n += len(p)
		if err == nil {
			_, err = w.fw.Write(p)
		}
	}
	if err == nil {
		err = w.fw.Close()
	}
	if err != nil || w.buf.Len() >= n+1 {
		out := make([]byte, 1, n+1)
		out[0] = stored
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return bytes.Clone(w.buf.Bytes())
}

// Unpack returns the document Pack was given; the result is the caller's.
func Unpack(packed []byte) ([]byte, error) {
	if len(packed) == 0 {
		return nil, fmt.Errorf("jsonpack: empty input")
	}
	if packed[0] == stored {
		return bytes.Clone(packed[1:]), nil
	}
	if int(packed[0]) > len(encodings) {
		return nil, fmt.Errorf("jsonpack: unknown encoding %d", packed[0])
	}
	dict := encodings[packed[0]-1].dict
	r := readers.Get().(*reader)
	defer readers.Put(r)
	r.src.Reset(packed[1:])
	if err := r.fr.(flate.Resetter).Reset(&r.src, dict); err != nil {
		return nil, err
	}
	// Member copies pack to between a sixth and a third of their JSON.
	out := bytes.NewBuffer(make([]byte, 0, 6*len(packed)))
	if _, err := io.Copy(out, r.fr); err != nil {
		return nil, fmt.Errorf("jsonpack: %w", err)
	}
	return out.Bytes(), nil
}

type writer struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

type reader struct {
	src bytes.Reader
	fr  io.ReadCloser
}

// Writers and readers are pooled: a DEFLATE writer holds several hundred
// KB of tables, far more than the documents it packs.
var (
	writers = sync.Pool{New: func() any {
		w := &writer{}
		// Level 1, the fastest (klauspost's uses a dictionary at every
		// level): packing runs on every informer event, and the
		// dictionary, not the level, is what makes small documents small.
		fw, err := flate.NewWriterDict(&w.buf, flate.BestSpeed, general)
		if err != nil {
			panic(err) // only for an invalid level
		}
		w.fw = fw
		return w
	}}
	readers = sync.Pool{New: func() any {
		r := &reader{}
		r.fr = flate.NewReaderDict(&r.src, general)
		return r
	}}
)
