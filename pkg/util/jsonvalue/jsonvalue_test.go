package jsonvalue

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// documents are real objects as atoll decodes them: a member copy and a
// binding (for its shape: conditions, quantities, nested lists).
func documents(t testing.TB) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	for name, path := range map[string]string{
		"member deployment": filepath.Join("testdata", "member-deployment.json"),
		"binding":           filepath.Join("..", "..", "manager", "testdata", "binding-weighted.json"),
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	return docs
}

// edgeCases are inputs where a decoder could differ from the standard one.
var edgeCases = map[string]string{
	"empty object":                     `{}`,
	"whitespace everywhere":            " \t\n\r{ \"kind\" : \"K\" ,\n\"a\" :\t[ 1 , 2 ] , \"b\" : { } , \"c\" : [ ] } \n",
	"nested empties":                   `{"kind":"K","a":[[],{},[{}]],"b":{"c":{}}}`,
	"literals":                         `{"kind":"K","t":true,"f":false,"n":null,"l":[true,false,null]}`,
	"small integers":                   `{"kind":"K","a":0,"b":-0,"c":7,"d":-42,"e":123456789012345678,"f":-123456789012345678}`,
	"int64 bounds":                     `{"kind":"K","max":9223372036854775807,"min":-9223372036854775808}`,
	"beyond int64":                     `{"kind":"K","a":9223372036854775808,"b":-9223372036854775809,"c":123456789012345678901234567890}`,
	"floats":                           `{"kind":"K","a":0.5,"b":-1.25,"c":1e3,"d":1E-3,"e":2.5e+10,"f":1.0,"g":-0.0,"h":1e0}`,
	"float out of range":               `{"kind":"K","a":1e400}`,
	"escapes":                          `{"kind":"K","a":"say \"hi\"","b":"tab\there","c":"\u00e9\u4e2d","d":"\/\\\b\f\n\r","e":"\ud83d\ude00"}`,
	"lone surrogate":                   `{"kind":"K","a":"\ud83d","b":"\udc00x"}`,
	"unicode as is":                    `{"kind":"K","a":"é中😀","é":"key"}`,
	"invalid utf-8":                    "{\"kind\":\"K\",\"a\":\"\xff\xfe\",\"b\":\"ok\xc3\"}",
	"repeated key":                     `{"kind":"K","a":1,"a":"two","a":{"three":3}}`,
	"escaped key":                      `{"kind":"K","a\"b":1,"\u006b":2}`,
	"no kind":                          `{"apiVersion":"v1"}`,
	"kind not a string":                `{"kind":7}`,
	"empty kind":                       `{"kind":""}`,
	"not an object":                    `[1,2]`,
	"null":                             `null`,
	"string at top":                    `"x"`,
	"trailing data":                    `{"kind":"K"} x`,
	"two objects":                      `{"kind":"K"}{"kind":"K"}`,
	"trailing comma":                   `{"kind":"K","a":1,}`,
	"trailing comma in list":           `{"kind":"K","a":[1,]}`,
	"missing colon":                    `{"kind" "K"}`,
	"missing comma":                    `{"kind":"K" "a":1}`,
	"unterminated":                     `{"kind":"K","a":[1,2`,
	"unterminated string":              `{"kind":"K","a":"abc`,
	"control character in string":      "{\"kind\":\"K\",\"a\":\"a\x01b\"}",
	"bad escape":                       `{"kind":"K","a":"\x"}`,
	"leading zero":                     `{"kind":"K","a":01}`,
	"plus sign":                        `{"kind":"K","a":+1}`,
	"bare dot":                         `{"kind":"K","a":1.}`,
	"bare exponent":                    `{"kind":"K","a":1e}`,
	"minus alone":                      `{"kind":"K","a":-}`,
	"hex":                              `{"kind":"K","a":0x10}`,
	"bad literal":                      `{"kind":"K","a":tru}`,
	"single quotes":                    `{'kind':'K'}`,
	"deep nesting within the limit":    `{"kind":"K","a":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
	"deeper than encoding/json allows": `{"kind":"K","a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// standard decodes as k8s.io/apimachinery's unstructured objects do.
func standard(data []byte) (map[string]any, error) {
	m := map[string]any{}
	err := utiljson.Unmarshal(data, &m)
	return m, err
}

// requireSame fails when Object accepted data and gave another answer than
// the standard decoder, and when Unstructured's outcome differs from
// UnmarshalJSON's.
func requireSame(t *testing.T, data []byte) {
	t.Helper()
	if got, err := Object(data); err == nil {
		want, stdErr := standard(data)
		if stdErr != nil {
			t.Fatalf("Object accepted input the standard decoder rejects (%v): %q", stdErr, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Object = %#v\nstandard = %#v\ninput %q", got, want, data)
		}
	}
	var got, want unstructured.Unstructured
	gotErr, wantErr := Unstructured(data, &got), want.UnmarshalJSON(data)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("Unstructured error %v, UnmarshalJSON error %v, input %q", gotErr, wantErr, data)
	}
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Fatalf("Unstructured = %#v\nUnmarshalJSON = %#v\ninput %q", got.Object, want.Object, data)
	}
}

func TestSameAsTheStandardDecoder(t *testing.T) {
	for name, data := range documents(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := Object(data); err != nil {
				t.Fatalf("a real object is not decoded on the fast path: %v", err)
			}
			requireSame(t, data)
		})
	}
	for name, in := range edgeCases {
		t.Run(name, func(t *testing.T) { requireSame(t, []byte(in)) })
	}
}

// TestFastPathCoversCommonInput keeps the fast path from quietly handing
// ordinary objects to the standard decoder.
func TestFastPathCoversCommonInput(t *testing.T) {
	for _, name := range []string{"whitespace everywhere", "nested empties", "literals", "small integers",
		"int64 bounds", "beyond int64", "floats", "escapes", "unicode as is", "invalid utf-8", "repeated key", "deep nesting within the limit"} {
		if _, err := Object([]byte(edgeCases[name])); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"float out of range", "not an object", "trailing data", "trailing comma",
		"leading zero", "deeper than encoding/json allows", "control character in string", "bad escape"} {
		if _, err := Object([]byte(edgeCases[name])); err == nil {
			t.Errorf("%s: decoded on the fast path, want it left to the standard decoder", name)
		}
	}
}

func FuzzObject(f *testing.F) {
	for _, data := range documents(f) {
		f.Add(data)
	}
	for _, in := range edgeCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { requireSame(t, data) })
}

// BenchmarkDecode decodes a member copy as the executor does before it
// compares it: through UnmarshalJSON, and through Unstructured.
func BenchmarkDecode(b *testing.B) {
	data := documents(b)["member deployment"]
	b.Run("standard", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonvalue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u unstructured.Unstructured
			if err := Unstructured(data, &u); err != nil {
				b.Fatal(err)
			}
		}
	})
}
