package jsonvalue

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Append appends v encoded exactly as encoding/json.Marshal encodes it:
// the same bytes (map keys sorted, HTML characters escaped) and an error
// where Marshal gives one. The manifest hash that member copies carry is a
// digest of these bytes, so they must never differ from Marshal's: a
// different byte would rewrite every member object after an upgrade.
//
// The values an unstructured object holds (map[string]any, []any, plain
// ASCII strings, int64, bool, nil) are written here without reflection;
// anything else (floats, strings that need escaping, other types) is
// written by encoding/json itself, value by value.
func Append(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case map[string]any:
		if v == nil {
			return append(buf, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json: by the keys' bytes
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, k)
			buf = append(buf, ':')
			var err error
			if buf, err = Append(buf, v[k]); err != nil {
				return buf, err
			}
		}
		return append(buf, '}'), nil
	case []any:
		if v == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = Append(buf, e); err != nil {
				return buf, err
			}
		}
		return append(buf, ']'), nil
	case string:
		return appendString(buf, v), nil
	case int64:
		return strconv.AppendInt(buf, v, 10), nil
	case bool:
		return strconv.AppendBool(buf, v), nil
	}
	data, err := json.Marshal(v)
	return append(buf, data...), err
}

// appendString writes s quoted. Printable ASCII other than the characters
// encoding/json escapes (the quote, the backslash and, for HTML, <, > and
// &) is written as it is; any other string is left to encoding/json, whose
// escaping (control characters, U+2028, invalid UTF-8) is then its own.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			return append(buf, data...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
