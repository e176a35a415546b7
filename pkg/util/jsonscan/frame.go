package jsonscan

import (
	"errors"
	"io"
)

// Framer splits a stream of JSON values (a watch response: one event after
// another) into one value per Read, as runtime.Framer asks. It does what
// k8s.io/apimachinery's JSON framer does without encoding/json's scanner,
// which validated every byte of every event before the event's decoder
// read it again: the framer only tracks strings and bracket depth, and
// leaves validation to whoever decodes the frame. At 100,000 bindings that
// scanner was a fifth of a restart's CPU (design 0013, decision 21).
var Framer framer

type framer struct{}

// NewFrameReader implements runtime.Framer.
func (framer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &frameReader{r: r, buf: make([]byte, 0, 32*1024)}
}

// NewFrameWriter implements runtime.Framer: JSON values need no framing.
func (framer) NewFrameWriter(w io.Writer) io.Writer { return w }

// maxFrame bounds one value, as the API server bounds a request (3 MiB) with
// room to spare: a stream that never closes its value must not take all
// memory.
const maxFrame = 64 << 20

var errFrameTooLarge = errors.New("jsonscan: JSON value in stream larger than 64 MiB")

type frameReader struct {
	r   io.ReadCloser
	buf []byte // buf[start:] is read but not yet returned
	// start is where the value being found begins in buf (after the
	// whitespace before it); scanned is how far it has been scanned, with
	// the scan's state at that point.
	start, scanned int
	depth          int
	begun          bool // the value's first byte has been seen
	inString       bool
	escaped        bool
	// remaining is the rest of a value a short buffer could not take.
	remaining []byte
	err       error
}

// Read copies one whole JSON value into p. When p is too small it copies
// what fits and returns io.ErrShortBuffer; the following Reads return the
// rest of the value the same way.
func (f *frameReader) Read(p []byte) (int, error) {
	if len(f.remaining) > 0 {
		n := copy(p, f.remaining)
		f.remaining = f.remaining[n:]
		if len(f.remaining) > 0 {
			return n, io.ErrShortBuffer
		}
		f.remaining = nil
		return n, nil
	}
	for {
		if end, ok := f.scan(); ok {
			value := f.buf[f.start:end]
			f.start, f.scanned, f.begun = end, end, false
			n := copy(p, value)
			if n < len(value) {
				// value aliases buf, which later reads overwrite.
				f.remaining = append([]byte(nil), value[n:]...)
				return n, io.ErrShortBuffer
			}
			return n, nil
		}
		if f.err != nil {
			if f.begun && errors.Is(f.err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, f.err
		}
		if f.scanned-f.start > maxFrame {
			return 0, errFrameTooLarge
		}
		f.fill()
	}
}

// fill reads more of the stream into buf, first moving the unreturned
// bytes to its front.
func (f *frameReader) fill() {
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:])
		f.buf = f.buf[:n]
		f.scanned -= f.start
		f.start = 0
	}
	if len(f.buf) == cap(f.buf) {
		f.buf = append(f.buf, make([]byte, cap(f.buf))...)[:len(f.buf)]
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	if err != nil {
		f.err = err
	}
}

// scan goes on from f.scanned and returns the end of the value that begins
// at f.start when buf holds all of it. Whitespace before a value is
// dropped; a scalar at the top level (never sent by a Kubernetes watch)
// ends at the next whitespace or bracket.
func (f *frameReader) scan() (end int, ok bool) {
	b := f.buf
	i := f.scanned
	if !f.begun {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		f.start, f.scanned = i, i
		if i == len(b) {
			return 0, false
		}
		f.begun = true
	}
	for ; i < len(b); i++ {
		c := b[i]
		if f.inString {
			switch {
			case f.escaped:
				f.escaped = false
			case c == '\\':
				f.escaped = true
			case c == '"':
				f.inString = false
				if f.depth == 0 {
					f.scanned = i + 1
					return i + 1, true
				}
			}
			continue
		}
		switch c {
		case '"':
			f.inString = true
		case '{', '[':
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth <= 0 {
				f.depth = 0
				f.scanned = i + 1
				return i + 1, true
			}
		default:
			if f.depth == 0 && i > f.start && (isSpace(c) || c == ',') {
				f.scanned = i
				return i, true
			}
		}
	}
	f.scanned = i
	if f.depth == 0 && !f.inString && f.err != nil && i > f.start {
		return i, true // a scalar the stream ends with
	}
	return 0, false
}

// Close implements io.Closer.
func (f *frameReader) Close() error { return f.r.Close() }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
