package script

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds nesting in both directions (a self-referencing Lua table
// would otherwise recurse forever).
const maxDepth = 64

// toLua converts a plain value (as decoded from JSON, or any value JSON can
// encode) to Lua.
func toLua(L *lua.LState, v any, depth int) (lua.LValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case string:
		return lua.LString(x), nil
	case bool:
		return lua.LBool(x), nil
	case int64:
		return lua.LNumber(x), nil
	case int32:
		return lua.LNumber(x), nil
	case int:
		return lua.LNumber(x), nil
	case float64:
		return lua.LNumber(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return lua.LNumber(f), nil
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, item := range x {
			lv, err := toLua(L, item, depth+1)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, item := range x {
			lv, err := toLua(L, item, depth+1)
			if err != nil {
				return nil, err
			}
			t.Append(lv)
		}
		return t, nil
	}
	// Typed values (API structs) go through their JSON form.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	var plain any
	if err := json.Unmarshal(data, &plain); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", v, err)
	}
	return toLua(L, normalize(plain), depth)
}

// normalize turns JSON's float64 integers into int64, as Kubernetes'
// unstructured objects hold them.
func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case map[string]any:
		for k, item := range x {
			x[k] = normalize(item)
		}
		return x
	case []any:
		for i, item := range x {
			x[i] = normalize(item)
		}
		return x
	}
	return v
}

// fromLua converts a Lua value to a plain value. Integral numbers become
// int64. A table whose keys are 1..n is a list, one with string keys a map;
// an empty table takes the shape ref has (nil when ref has none: the caller
// drops it).
func fromLua(v lua.LValue, ref any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels (a table that contains itself?)", maxDepth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %v has no JSON form", f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return tableFromLua(x, ref, depth)
	}
	return nil, fmt.Errorf("a %s cannot be returned", v.Type())
}

func tableFromLua(t *lua.LTable, ref any, depth int) (any, error) {
	n := t.MaxN()
	size := 0
	t.ForEach(func(lua.LValue, lua.LValue) { size++ })
	if size == 0 {
		switch ref.(type) {
		case []any:
			return []any{}, nil
		case map[string]any:
			return map[string]any{}, nil
		}
		return nil, nil
	}
	if n == size {
		refList, _ := ref.([]any)
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			var r any
			if i-1 < len(refList) {
				r = refList[i-1]
			} else if len(refList) > 0 {
				r = refList[0]
			}
			item, err := fromLua(t.RawGetInt(i), r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, item)
		}
		return out, nil
	}
	refMap, _ := ref.(map[string]any)
	out := make(map[string]any, size)
	var err error
	t.ForEach(func(k, item lua.LValue) {
		if err != nil {
			return
		}
		var key string
		switch kk := k.(type) {
		case lua.LString:
			key = string(kk)
		case lua.LNumber:
			key = strconv.FormatFloat(float64(kk), 'f', -1, 64)
		default:
			err = fmt.Errorf("a table key of type %s has no JSON form", k.Type())
			return
		}
		var val any
		val, err = fromLua(item, refMap[key], depth+1)
		if err == nil && val != nil {
			out[key] = val
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
