package overridemanager

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// errPathNotFound is returned when a JSON pointer does not resolve.
var errPathNotFound = errors.New("path not found")

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path must start with /")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// getPath returns the value the pointer addresses in doc.
func getPath(doc any, pointer string) (any, error) {
	tokens, err := parsePointer(pointer)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, errPathNotFound
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, errPathNotFound
			}
			cur = c[i]
		default:
			return nil, errPathNotFound
		}
	}
	return cur, nil
}

// patch applies one RFC 6902 operation (add, remove or replace) to doc and
// returns the new document (doc itself is changed where possible).
func patch(doc any, op policyv1alpha1.OverriderOperator, pointer string, value any) (any, error) {
	tokens, err := parsePointer(pointer)
	if err != nil {
		return nil, err
	}
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return nil, fmt.Errorf("unsupported operator %q", op)
	}
	if len(tokens) == 0 {
		switch op {
		case policyv1alpha1.OverriderOpRemove:
			return nil, fmt.Errorf("cannot remove the whole document")
		default:
			return value, nil
		}
	}
	return patchIn(doc, op, tokens, value)
}

func patchIn(cur any, op policyv1alpha1.OverriderOperator, tokens []string, value any) (any, error) {
	tok, last := tokens[0], len(tokens) == 1
	switch c := cur.(type) {
	case map[string]any:
		if !last {
			child, ok := c[tok]
			if !ok {
				return nil, errPathNotFound
			}
			n, err := patchIn(child, op, tokens[1:], value)
			if err != nil {
				return nil, err
			}
			c[tok] = n
			return c, nil
		}
		_, exists := c[tok]
		switch op {
		case policyv1alpha1.OverriderOpAdd:
			c[tok] = value
		case policyv1alpha1.OverriderOpReplace:
			if !exists {
				return nil, errPathNotFound
			}
			c[tok] = value
		case policyv1alpha1.OverriderOpRemove:
			if !exists {
				return nil, errPathNotFound
			}
			delete(c, tok)
		}
		return c, nil
	case []any:
		if last && op == policyv1alpha1.OverriderOpAdd && tok == "-" {
			return append(c, value), nil
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i > len(c) || (i == len(c) && (!last || op != policyv1alpha1.OverriderOpAdd)) {
			return nil, errPathNotFound
		}
		if !last {
			n, err := patchIn(c[i], op, tokens[1:], value)
			if err != nil {
				return nil, err
			}
			c[i] = n
			return c, nil
		}
		switch op {
		case policyv1alpha1.OverriderOpAdd:
			out := make([]any, 0, len(c)+1)
			out = append(out, c[:i]...)
			out = append(out, value)
			return append(out, c[i:]...), nil
		case policyv1alpha1.OverriderOpReplace:
			c[i] = value
			return c, nil
		default: // remove
			return append(c[:i:i], c[i+1:]...), nil
		}
	default:
		return nil, errPathNotFound
	}
}
