// Package jsonvalue decodes a JSON object into the generic values an
// unstructured.Unstructured holds (map[string]any, []any, string, int64,
// float64, bool, nil), in one pass and without reflection.
//
// The executor decodes every member copy and every template it compares:
// at 100,000 templates a restart's comparison pass decodes 300,000 objects,
// and k8s.io/apimachinery's decoder (sigs.k8s.io/json, a fork of
// encoding/json) reads each twice, once to validate and once to decode
// through reflect. This package gives the same values for the JSON it
// accepts and accepts only what that decoder accepts; anything unusual (an
// escape in a string, a float out of range, invalid JSON) is not decoded
// here but left to the standard decoder by Unstructured, so results and
// errors never differ (FuzzObject checks it).
//
// Append is the other direction: the bytes encoding/json.Marshal gives for
// such values (the manifest hash's input), written without reflection for
// the common ones and by encoding/json for the rest (FuzzAppend checks it).
package jsonvalue

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/atoll-dev/atoll/pkg/util/jsonscan"
)

// errSlow says the fast path does not decode this input; the standard
// decoder does, or says why it cannot.
var errSlow = errors.New("jsonvalue: left to the standard decoder")

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// Unstructured decodes data into u as u.UnmarshalJSON does, with the same
// result and the same errors.
func Unstructured(data []byte, u *unstructured.Unstructured) error {
	if m, err := Object(data); err == nil {
		// UnmarshalJSON also requires a kind; without one it returns its
		// own error, so that case goes to it.
		if kind, ok := m["kind"].(string); ok && kind != "" {
			u.Object = m
			return nil
		}
	}
	return u.UnmarshalJSON(data)
}

// Object decodes data, a JSON object, into the values
// k8s.io/apimachinery/pkg/util/json.Unmarshal gives: integers that fit
// int64 (written without a '.') as int64, other numbers as float64. An
// error means only that the input is not decoded here (it may still be
// valid JSON); it is never a different answer for the same input.
func Object(data []byte) (map[string]any, error) {
	d := decoder{b: data}
	d.space()
	if !d.at('{') {
		return nil, errSlow
	}
	m, err := d.object()
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.b) {
		return nil, errSlow
	}
	return m, nil
}

type decoder struct {
	b     []byte
	i     int
	depth int
}

// at reports whether the next byte is c.
func (d *decoder) at(c byte) bool { return d.i < len(d.b) && d.b[d.i] == c }

func (d *decoder) space() { d.i = jsonscan.Space(d.b, d.i) }

func (d *decoder) value() (any, error) {
	if d.i >= len(d.b) {
		return nil, errSlow
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.string()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, errSlow
}

func (d *decoder) enter() error {
	if d.depth++; d.depth > maxDepth {
		return errSlow
	}
	return nil
}

func (d *decoder) object() (map[string]any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.i++ // '{'
	m := map[string]any{}
	d.space()
	if d.at('}') {
		d.i++
		d.depth--
		return m, nil
	}
	for {
		if !d.at('"') {
			return nil, errSlow
		}
		key, err := d.string()
		if err != nil {
			return nil, err
		}
		d.space()
		if !d.at(':') {
			return nil, errSlow
		}
		d.i++
		d.space()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		m[key] = v // a repeated key: the last one wins, as in encoding/json
		if closed, err := d.next('}'); err != nil || closed {
			return m, err
		}
	}
}

func (d *decoder) array() ([]any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.i++ // '['
	// Empty arrays decode to an empty, non-nil slice, as in encoding/json.
	a := make([]any, 0)
	d.space()
	if d.at(']') {
		d.i++
		d.depth--
		return a, nil
	}
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if closed, err := d.next(']'); err != nil || closed {
			return a, err
		}
	}
}

// next reads what follows a member or an element: a comma (and the space
// after it), or the closing bracket, which leaves the level.
func (d *decoder) next(closing byte) (closed bool, err error) {
	i, closed, err := jsonscan.Separator(d.b, d.i, closing)
	if err != nil {
		return false, errSlow
	}
	if d.i = i; closed {
		d.depth--
	}
	return closed, nil
}

// string decodes the string at d.b[d.i]. Plain ASCII and valid UTF-8 are
// taken as they are; a string with an escape or with bytes that are not
// valid UTF-8 (replaced with U+FFFD) is unquoted by the standard decoder
// itself, so every rule of unquoting stays its own.
func (d *decoder) string() (string, error) {
	end, err := jsonscan.StringEnd(d.b, d.i)
	if err != nil {
		return "", errSlow // a control character or no end: not valid JSON
	}
	s := d.b[d.i+1 : end-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return d.unquote(end)
	}
	d.i = end
	return string(s), nil
}

// unquote decodes the string d.b[d.i:end] with the standard decoder.
func (d *decoder) unquote(end int) (string, error) {
	var s string
	if err := utiljson.Unmarshal(d.b[d.i:end], &s); err != nil {
		return "", errSlow
	}
	d.i = end
	return s, nil
}

func (d *decoder) literal(word string, v any) (any, error) {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return nil, errSlow
	}
	d.i += len(word)
	return v, nil
}

// number decodes a number as sigs.k8s.io/json does for Kubernetes:
// written without a '.', and within int64, it is an int64; otherwise a
// float64. JSON's grammar is checked here; a float out of range is left
// to the standard decoder, which reports it.
func (d *decoder) number() (any, error) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	switch {
	case d.at('0'):
		d.i++
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return nil, errSlow
	}
	intDigits := d.i - digits
	dot, exp := false, false
	if d.at('.') {
		dot = true
		d.i++
		if d.digits() == 0 {
			return nil, errSlow
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		exp = true
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, errSlow
		}
	}
	tok := d.b[start:d.i]
	if !dot && !exp && intDigits <= 18 {
		// At most 18 digits always fit an int64.
		var n int64
		for _, c := range d.b[digits:d.i] {
			n = n*10 + int64(c-'0')
		}
		if tok[0] == '-' {
			n = -n
		}
		return n, nil
	}
	s := string(tok)
	if !dot {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errSlow
	}
	return f, nil
}

// digits skips decimal digits and says how many.
func (d *decoder) digits() int {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}
