// Package jsonpack keeps JSON documents that are held long and read rarely
// (member copies in the executor's informers, template bytes) compressed
// in memory. Kubernetes objects are small (one to a few KB) and alike, so
// plain DEFLATE gains little on one of them alone; a preset dictionary of
// the text they share (field names, defaults, atoll's labels and
// annotations) lets each object be stored as little more than what makes
// it different.
package jsonpack

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// The first byte of a packed document says how the rest is stored.
const (
	stored   byte = 0 // as it is: compression would not have made it smaller
	deflated byte = 1 // DEFLATE with dictionary
)

// Pack returns the concatenation of parts compressed. It never fails: data
// that does not compress is kept as it is, behind one byte.
func Pack(parts ...[]byte) []byte {
	w := writers.Get().(*writer)
	defer writers.Put(w)
	w.buf.Reset()
	w.buf.WriteByte(deflated)
	w.fw.Reset(&w.buf)
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
	switch packed[0] {
	case stored:
		return bytes.Clone(packed[1:]), nil
	case deflated:
	default:
		return nil, fmt.Errorf("jsonpack: unknown encoding %d", packed[0])
	}
	r := readers.Get().(*reader)
	defer readers.Put(r)
	r.src.Reset(packed[1:])
	if err := r.fr.(flate.Resetter).Reset(&r.src, dictionary); err != nil {
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
		// Level 2, the fastest that uses a dictionary (BestSpeed ignores
		// it): packing runs on every informer event, and the dictionary,
		// not the level, is what makes small documents small (a member
		// Deployment packs to 0.16 of its JSON at level 2, 0.15 at 9).
		fw, err := flate.NewWriterDict(&w.buf, 2, dictionary)
		if err != nil {
			panic(err) // only for an invalid level
		}
		w.fw = fw
		return w
	}}
	readers = sync.Pool{New: func() any {
		r := &reader{}
		r.fr = flate.NewReaderDict(&r.src, dictionary)
		return r
	}}
)
