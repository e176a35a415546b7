package script

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func call(t *testing.T, limits Limits, src, fn string, nret int, ref any, args ...any) ([]any, error) {
	t.Helper()
	s, err := Compile("test", src, map[string]Library{
		"kube": {"double": func(args []any) (any, error) { return args[0].(int64) * 2, nil }},
	})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s.Call(context.Background(), limits, fn, nret, ref, args...)
}

func TestCallConvertsValues(t *testing.T) {
	obj := map[string]any{
		"spec":   map[string]any{"replicas": int64(3), "selector": map[string]any{}, "list": []any{}, "ratio": 0.5},
		"status": map[string]any{},
	}
	got, err := call(t, DefaultLimits, `
		local kube = require("kube")
		function Revise(obj, n)
			obj.spec.replicas = kube.double(n)
			obj.spec.added = {}
			return obj
		end`, "Revise", 1, obj, obj, int64(2))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		// Empty tables take their shape from the reference; an empty table
		// the script added is dropped.
		"spec":   map[string]any{"replicas": int64(4), "selector": map[string]any{}, "list": []any{}, "ratio": 0.5},
		"status": map[string]any{},
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestCallFailures(t *testing.T) {
	fast := DefaultLimits
	fast.Timeout = 200 * time.Millisecond
	cases := map[string]struct {
		src     string
		limits  Limits
		wantErr string
		wantIs  error
	}{
		"syntax error":          {src: `function F( return 1 end`, wantErr: "parsing"},
		"missing function":      {src: `function G() return 1 end`, wantErr: "defines no function F"},
		"runtime error":         {src: `function F() error("boom") end`, wantErr: "boom"},
		"os.execute is removed": {src: `function F() return os.execute("true") end`, wantErr: "attempt to call a non-function"},
		"io is not opened":      {src: `function F() return io.open("/etc/passwd") end`, wantErr: "attempt to index a non-table"},
		"loadstring refused":    {src: `function F() return loadstring("return 1")() end`, wantErr: "not available"},
		"setmetatable refused":  {src: `function F() return setmetatable({}, {}) end`, wantErr: "not available"},
		"unknown module":        {src: `local x = require("io") function F() return 1 end`, wantErr: `module "io" is not available`},
		"endless loop":          {src: `function F() while true do end end`, limits: fast, wantIs: ErrTimeout},
		"endless loop at top":   {src: `while true do end function F() return 1 end`, limits: fast, wantIs: ErrTimeout},
		"huge string.rep":       {src: `function F() return string.rep("x", 1e9) end`, wantErr: "exceeds the bound"},
		"deep recursion":        {src: `function F(n) return F(n + 1) + 1 end`, wantErr: "stack overflow"},
		"table growth": {src: `function F() local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i, "abcdefgh" .. i} end end`,
			limits: Limits{Timeout: 20 * time.Second, MaxAllocBytes: 32 << 20, MaxCallDepth: 200, MaxStackSlots: 64 * 1024, MaxStringBytes: 1 << 20},
			wantIs: ErrMemory},
		"self-referencing result": {src: `function F() local t = {} t.self = t return t end`, wantErr: "nested deeper"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			limits := tc.limits
			if limits.Timeout == 0 {
				limits = DefaultLimits
			}
			s, err := Compile("test", tc.src, nil)
			if err == nil {
				_, err = s.Call(context.Background(), limits, "F", 1, nil, int64(1))
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %q is not %v", err, tc.wantIs)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestCallsDoNotShareState(t *testing.T) {
	src := `counter = (counter or 0) + 1 function F() string.upper = nil return counter end`
	for i := 0; i < 2; i++ {
		got, err := call(t, DefaultLimits, src, "F", 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != int64(1) {
			t.Fatalf("call %d saw counter %v: state leaked between calls", i, got[0])
		}
	}
}
