package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var seeds = []string{
	`{}`, `[]`, `""`, `0`, `-1.5e+10`, `true`, `false`, `null`,
	` { "a" : [ 1 , { "b" : null } , "x\"]}" ] , "c\\" : {} } `,
	`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","annotations":{"a\u0062":"}{\"","x":""},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{".":{}}}}]},"spec":{"replicas":3}}`,
	`{"type":"ADDED","object":{"kind":"ConfigMap","data":{"k":"v\n"}}}`,
	`[[[[[]]]], {"": ""}, "\u00e9\ud83d\ude00"]`,
}

// Whatever encoding/json accepts, Skip finds the same end, and Object the
// same members.
func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		end, err := Skip(b, 0)
		if err != nil {
			t.Fatalf("Skip(%q): %v", b, err)
		}
		if rest := bytes.TrimSpace(b[end:]); len(rest) != 0 {
			t.Fatalf("Skip(%q) stopped at %d, before %q", b, end, rest)
		}
		var want map[string]json.RawMessage
		if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) || json.Unmarshal(b, &want) != nil {
			return // not an object
		}
		got := map[string]json.RawMessage{}
		if _, err := Object(b, 0, func(m Member) error {
			var key string
			if err := json.Unmarshal(b[m.KeyStart:m.KeyStart+len(m.Key)+2], &key); err != nil {
				t.Fatalf("key %q: %v", m.Key, err)
			}
			got[key] = json.RawMessage(b[m.Start:m.End]) // last one wins, as in encoding/json
			return nil
		}); err != nil {
			t.Fatalf("Object(%q): %v", b, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Object(%q) members (-encoding/json +jsonscan):\n%s", b, diff)
		}
	})
}

func TestRejectsBrokenStructure(t *testing.T) {
	cases := map[string]string{
		"unclosed object":     `{"a":1`,
		"unclosed string":     `{"a":"b}`,
		"missing colon":       `{"a" 1}`,
		"missing comma":       `{"a":1 "b":2}`,
		"trailing comma":      `{"a":1,}`,
		"bare word":           `{"a":yes}`,
		"unclosed array":      `[1,2`,
		"key not a string":    `{a:1}`,
		"control in a string": "\"a\nb\"",
		"empty":               ``,
		"too deep":            strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if end, err := Skip([]byte(in), 0); err == nil {
				t.Fatalf("Skip(%q) = %d, want an error", in, end)
			}
		})
	}
}

func TestFind(t *testing.T) {
	doc := []byte(`{"kind":"ConfigMap","metadata":{"name":"a"},"data":{"metadata":"not this"}}`)
	start, end, found, err := Find(doc, "metadata")
	if err != nil || !found {
		t.Fatalf("Find: found %v, err %v", found, err)
	}
	if got := string(doc[start:end]); got != `{"name":"a"}` {
		t.Fatalf("Find = %s", got)
	}
	if _, _, found, _ := Find(doc, "status"); found {
		t.Fatal("Find found a key the object does not have")
	}
}

func TestArray(t *testing.T) {
	doc := []byte(` [ {"a":[1,2]} , "x" ,3 ] `)
	var got []string
	end, err := Array(doc, 0, func(start, end int) error {
		got = append(got, string(doc[start:end]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`{"a":[1,2]}`, `"x"`, `3`}, got); diff != "" {
		t.Fatalf("elements (-want +got):\n%s", diff)
	}
	if string(doc[end:]) != " " {
		t.Fatalf("Array ended at %d, before %q", end, doc[end:])
	}
}

func TestKeyIs(t *testing.T) {
	cases := map[string]struct {
		doc  string
		key  string
		want bool
	}{
		"plain":           {doc: `{"metadata":1}`, key: "metadata", want: true},
		"other":           {doc: `{"metadatas":1}`, key: "metadata"},
		"escaped":         {doc: `{"meta\u0064ata":1}`, key: "metadata", want: true},
		"escaped quote":   {doc: `{"a\"b":1}`, key: `a"b`, want: true},
		"escaped differs": {doc: `{"meta\u0064atum":1}`, key: "metadata"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got bool
			if _, err := Object([]byte(tc.doc), 0, func(m Member) error {
				got = m.KeyIs(tc.key)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("KeyIs(%q) on %s = %v, want %v", tc.key, tc.doc, got, tc.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{`"plain"`: "plain", `"caf\u00e9"`: "café", `"a\"b"`: `a"b`, `null`: ""} {
		if got, err := String([]byte(in)); err != nil || got != want {
			t.Errorf("String(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := String([]byte(`12`)); err == nil {
		t.Error("a number decoded as a string")
	}
}
