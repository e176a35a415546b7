package jsonscan

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readFrames reads every frame from r with reads of at most size bytes,
// joining the pieces of a frame that does not fit.
func readFrames(t *testing.T, r io.Reader, size int) ([]string, error) {
	t.Helper()
	var frames []string
	var cur []byte
	p := make([]byte, size)
	for {
		n, err := r.Read(p)
		cur = append(cur, p[:n]...)
		switch {
		case errors.Is(err, io.ErrShortBuffer):
			continue
		case err != nil:
			return frames, err
		}
		frames = append(frames, string(cur))
		cur = nil
	}
}

func TestFrameReaderSplitsValues(t *testing.T) {
	values := []string{
		`{"type":"ADDED","object":{"kind":"ConfigMap","data":{"a":"}{][","b":"say \"}\"","c":"\\"}}}`,
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}}`,
		`[1,2,{"x":[]}]`,
		`{}`,
		`{"long":"` + strings.Repeat("x", 100_000) + `"}`,
	}
	stream := " \n" + strings.Join(values, "\n") + "\r\n\t"
	for _, tc := range []struct {
		name   string
		reader func(io.Reader) io.Reader
		size   int
	}{
		{"whole reads", func(r io.Reader) io.Reader { return r }, 1 << 20},
		{"one byte at a time from the stream", iotest.OneByteReader, 1 << 20},
		{"short buffers", func(r io.Reader) io.Reader { return r }, 7},
		{"half reads and short buffers", iotest.HalfReader, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := Framer.NewFrameReader(io.NopCloser(tc.reader(strings.NewReader(stream))))
			got, err := readFrames(t, fr, tc.size)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v, want io.EOF", err)
			}
			if len(got) != len(values) {
				t.Fatalf("got %d frames, want %d", len(got), len(values))
			}
			for i := range values {
				if got[i] != values[i] {
					t.Errorf("frame %d = %.80q…, want %.80q…", i, got[i], values[i])
				}
			}
		})
	}
}

func TestFrameReaderCutValue(t *testing.T) {
	fr := Framer.NewFrameReader(io.NopCloser(strings.NewReader(`{"a":1} {"b":"}`)))
	got, err := readFrames(t, fr, 64)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("stream ended with %v, want io.ErrUnexpectedEOF", err)
	}
	if len(got) != 1 || got[0] != `{"a":1}` {
		t.Fatalf("frames %q, want the first value only", got)
	}
}

func TestFrameReaderManyEvents(t *testing.T) {
	var stream bytes.Buffer
	for i := range 50 {
		stream.WriteString(`{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c`)
		stream.WriteString(strings.Repeat("é", i))
		stream.WriteString(`"},"data":{"k":"` + strings.Repeat(`\"{`, i) + `"}}}` + "\n")
	}
	fr := Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream.Bytes())))
	got, err := readFrames(t, fr, 16)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	want := strings.SplitAfter(strings.TrimSuffix(stream.String(), "\n"), "}}}\n")
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if w := strings.TrimSuffix(want[i], "\n"); got[i] != w {
			t.Fatalf("frame %d = %q, want %q", i, got[i], w)
		}
	}
}
