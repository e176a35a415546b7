// Package jsonscan finds where JSON values begin and end without decoding
// them. It lets a reader that needs a few fields of a large document (the
// metadata of a member object, the type and object of a watch event) take
// them as slices of the input and leave the rest as bytes: one pass over
// the document, nothing allocated. It checks the structure it walks
// (brackets, strings, separators) but does not validate numbers or
// escapes; whoever decodes a slice it returns validates that slice.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// maxDepth bounds nesting, as encoding/json does (10,000); Kubernetes
// objects nest a few dozen levels at most.
const maxDepth = 10000

// Member is one member of a JSON object.
type Member struct {
	// Key is the key as written between its quotes (escapes not decoded).
	Key []byte
	// KeyStart is the index of the key's opening quote; Start and End
	// bound the value (End is just past it).
	KeyStart, Start, End int
}

// Skip returns the index just past the JSON value that starts at b[i]
// (whitespace before it allowed).
func Skip(b []byte, i int) (int, error) {
	return skip(b, i, 0)
}

// Object calls fn for each member of the JSON object that starts at b[i]
// (whitespace before it allowed), in document order, and returns the index
// just past the object. It stops at the first error fn returns.
func Object(b []byte, i int, fn func(Member) error) (int, error) {
	return object(b, i, 0, fn)
}

// Array calls fn with the extent of each element of the JSON array that
// starts at b[i] (whitespace before it allowed), in order, and returns the
// index just past the array.
func Array(b []byte, i int, fn func(start, end int) error) (int, error) {
	i = space(b, i)
	if i >= len(b) || b[i] != '[' {
		return i, syntaxError(b, i, "'['")
	}
	return array(b, i, 1, fn)
}

// KeyIs reports whether the member's key is key, decoding the key first
// when it is written with escapes.
func (m Member) KeyIs(key string) bool {
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return string(m.Key) == key
	}
	var decoded string
	quoted := make([]byte, 0, len(m.Key)+2)
	quoted = append(append(append(quoted, '"'), m.Key...), '"')
	return json.Unmarshal(quoted, &decoded) == nil && decoded == key
}

// Find returns the value of the first member of the object b whose key is
// key, and whether there is one.
func Find(b []byte, key string) (start, end int, found bool, err error) {
	_, err = Object(b, 0, func(m Member) error {
		if !found && m.KeyIs(key) {
			start, end, found = m.Start, m.End, true
		}
		return nil
	})
	return start, end, found, err
}

func skip(b []byte, i, depth int) (int, error) {
	i = space(b, i)
	if i >= len(b) {
		return i, errEnd
	}
	switch c := b[i]; {
	case c == '{':
		return object(b, i, depth+1, nil)
	case c == '[':
		return array(b, i, depth+1, nil)
	case c == '"':
		return str(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && isNumberByte(b[j]) {
			j++
		}
		return j, nil
	default:
		for _, lit := range literals {
			if bytes.HasPrefix(b[i:], lit) {
				return i + len(lit), nil
			}
		}
		return i, syntaxError(b, i, "a value")
	}
}

var literals = [][]byte{[]byte("true"), []byte("false"), []byte("null")}

func object(b []byte, i, depth int, fn func(Member) error) (int, error) {
	if depth > maxDepth {
		return i, fmt.Errorf("jsonscan: nested deeper than %d", maxDepth)
	}
	i = space(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, syntaxError(b, i, "'{'")
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, syntaxError(b, i, "a key")
		}
		keyStart := i
		keyEnd, err := str(b, i)
		if err != nil {
			return keyEnd, err
		}
		i = space(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return i, syntaxError(b, i, "':'")
		}
		start := space(b, i+1)
		end, err := skip(b, start, depth)
		if err != nil {
			return end, err
		}
		if fn != nil {
			if err := fn(Member{Key: b[keyStart+1 : keyEnd-1], KeyStart: keyStart, Start: start, End: end}); err != nil {
				return end, err
			}
		}
		next, closed, err := separator(b, end, '}')
		if err != nil || closed {
			return next, err
		}
		i = next
	}
}

func array(b []byte, i, depth int, fn func(start, end int) error) (int, error) {
	if depth > maxDepth {
		return i, fmt.Errorf("jsonscan: nested deeper than %d", maxDepth)
	}
	i = space(b, i+1) // past '['
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		i = space(b, i)
		end, err := skip(b, i, depth)
		if err != nil {
			return end, err
		}
		if fn != nil {
			if err := fn(i, end); err != nil {
				return end, err
			}
		}
		next, closed, err := separator(b, end, ']')
		if err != nil || closed {
			return next, err
		}
		i = next
	}
}

// separator reads what follows a member or an element that ends at b[i]:
// a comma (next is past it) or the closing bracket (closed, next is past
// it).
func separator(b []byte, i int, closing byte) (next int, closed bool, err error) {
	i = space(b, i)
	if i >= len(b) {
		return i, false, errEnd
	}
	switch b[i] {
	case ',':
		return space(b, i+1), false, nil
	case closing:
		return i + 1, true, nil
	}
	return i, false, syntaxError(b, i, fmt.Sprintf("',' or '%c'", closing))
}

// str returns the index just past the string whose opening quote is b[i].
func str(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		for j < len(b) && !inStringStop[b[j]] {
			j++ // most bytes of a string: nothing to look at
		}
		if j == len(b) {
			break
		}
		switch b[j] {
		case '"':
			return j + 1, nil
		case '\\':
			j++ // the escaped byte cannot end the string
		default:
			return j, syntaxError(b, j, "no control character in a string")
		}
	}
	return len(b), errEnd
}

// inStringStop marks the bytes str must look at: the closing quote, the
// escape and the control characters JSON forbids in strings.
var inStringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

var errEnd = fmt.Errorf("jsonscan: unexpected end of JSON input")

func syntaxError(b []byte, i int, want string) error {
	if i >= len(b) {
		return errEnd
	}
	return fmt.Errorf("jsonscan: at offset %d: want %s, found %q", i, want, b[i])
}

// Cut returns the extent of member m of the object b[objStart:objEnd]
// together with one of the commas beside it (the one after it, or before
// it when it is the last), so that the object without b[start:end] is
// still JSON.
func Cut(b []byte, objStart, objEnd int, m Member) (start, end int) {
	if i := space(b, m.End); i < objEnd && b[i] == ',' {
		return m.KeyStart, i + 1
	}
	i := m.KeyStart - 1
	for i > objStart && isSpace(b[i]) {
		i--
	}
	if b[i] == ',' {
		return i, m.End
	}
	return m.KeyStart, m.End
}

// Space returns the index of the first byte at or after b[i] that is not
// JSON whitespace.
func Space(b []byte, i int) int { return space(b, i) }

// StringEnd returns the index just past the JSON string whose opening
// quote is b[i]; a control character or the end of b is an error.
func StringEnd(b []byte, i int) (int, error) { return str(b, i) }

// Separator reads what follows a member or an element that ends at b[i]:
// a comma (next is past it and the space after it) or the closing bracket
// (closed, next is past it).
func Separator(b []byte, i int, closing byte) (next int, closed bool, err error) {
	return separator(b, i, closing)
}

// String decodes the JSON string b (null is ""); the result does not share
// memory with b. A string without escapes is copied as it is: a value
// Object or Array handed out has been checked for control characters.
func String(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", err
	}
	return s, nil
}
