package jsonvalue

import (
	"encoding/json"
	"math"
	"testing"
)

// requireSameBytes fails when Append's bytes or error differ from
// encoding/json.Marshal's for v.
func requireSameBytes(t *testing.T, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, gotErr := Append(nil, v)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("Append error %v, Marshal error %v, value %#v", gotErr, wantErr, v)
	}
	if wantErr == nil && string(got) != string(want) {
		t.Fatalf("Append = %s\nMarshal = %s", got, want)
	}
}

func TestAppendIsMarshal(t *testing.T) {
	// Every decoded document and edge case the decoder's tests use, as the
	// values an unstructured object holds.
	for name, data := range documents(t) {
		t.Run(name, func(t *testing.T) {
			v, err := standard(data)
			if err != nil {
				t.Fatal(err)
			}
			requireSameBytes(t, v)
		})
	}
	for name, in := range edgeCases {
		v, err := standard([]byte(in))
		if err != nil {
			continue // not a value to encode
		}
		t.Run(name, func(t *testing.T) { requireSameBytes(t, v) })
	}
	// Values no decoder gives but code may set: other Go types, nil
	// containers, what encoding/json escapes or refuses.
	for name, v := range map[string]any{
		"nil map":             map[string]any(nil),
		"nil list":            []any(nil),
		"nil inside":          map[string]any{"a": nil, "b": []any(nil), "c": map[string]any(nil)},
		"empty containers":    map[string]any{"a": map[string]any{}, "b": []any{}},
		"html characters":     map[string]any{"<a>": "x & y <b>"},
		"quote and backslash": map[string]any{`k"\`: `v"\`},
		"control characters":  "a\x00b\x1fc\td\ne\bf\fg",
		"delete character":    "a\x7fb",
		"line separators":     "a\u2028b\u2029c",
		"invalid utf-8":       "a\xffb\xc0",
		"non-ascii":           map[string]any{"ключ": "значение ✓"},
		"key order by bytes":  map[string]any{"b": 1, "B": 2, "a": 3, "": 4, "aa": 5, "é": 6},
		"int64 bounds":        []any{int64(math.MinInt64), int64(math.MaxInt64), int64(0), int64(-1)},
		"other integers":      []any{1, int32(-2), uint64(math.MaxUint64), int8(3)},
		"floats":              []any{0.0, math.Copysign(0, -1), 1.5, 1e-7, 1e21, 123456789.0, 1e20, math.SmallestNonzeroFloat64, float32(0.1)},
		"typed maps":          map[string]any{"labels": map[string]string{"z": "1", "a": "<2>"}, "n": map[string]int64{"x": 1}},
		"typed slices":        map[string]any{"s": []string{"a", "b"}, "i": []int64{1}},
		"bytes":               []byte("hello"),
		"struct":              struct{ A int }{1},
		"nan":                 map[string]any{"a": math.NaN()},
		"infinity":            []any{math.Inf(1)},
		"unsupported type":    map[string]any{"f": func() {}},
		"true and false":      []any{true, false},
	} {
		t.Run(name, func(t *testing.T) { requireSameBytes(t, v) })
	}
}

func FuzzAppend(f *testing.F) {
	for _, data := range documents(f) {
		f.Add(data)
	}
	for _, in := range edgeCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := standard(data)
		if err != nil {
			return
		}
		requireSameBytes(t, v)
	})
}

// BenchmarkEncode is the manifest hash's encoding of a member Deployment:
// encoding/json.Marshal against Append into a reused buffer.
func BenchmarkEncode(b *testing.B) {
	v, err := standard(documents(b)["member deployment"])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonvalue", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			if buf, err = Append(buf[:0], v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
