// Package script runs the Lua scripts of ResourceInterpreterCustomizations
// in a sandbox, with the Lua VM Karmada uses (gopher-lua) and the libraries
// Karmada's scripts expect (base, table, string, math, a safe os, and
// require("kube")).
//
// Every call runs in a fresh Lua state: nothing one script defines or
// changes is seen by another call. A call is bounded in time (the VM checks
// its context between instructions), in process allocation while it runs,
// and in call depth and stack size; a script that breaks a bound is stopped
// with an error saying which.
package script

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Limits bound one call of a script.
type Limits struct {
	// Timeout bounds the call's wall-clock time (Karmada's is 1s).
	Timeout time.Duration
	// MaxAllocBytes bounds what the process allocates while the call runs
	// (sampled, so a call may overshoot by what it allocates in one sample
	// period). The count is process-wide: it is a ceiling no sane script
	// comes near, not an accounting.
	MaxAllocBytes uint64
	// MaxCallDepth bounds nested Lua calls (deep recursion).
	MaxCallDepth int
	// MaxStackSlots bounds the Lua value stack.
	MaxStackSlots int
	// MaxStringBytes bounds one string.rep result.
	MaxStringBytes int
}

// DefaultLimits are the bounds of every call unless a caller sets others.
var DefaultLimits = Limits{
	Timeout:        time.Second,
	MaxAllocBytes:  256 << 20,
	MaxCallDepth:   200,
	MaxStackSlots:  64 * 1024,
	MaxStringBytes: 1 << 20,
}

// Func is a Go function a script can call through a library; it takes and
// returns plain values (map[string]any, []any, string, int64, float64,
// bool, nil).
type Func func(args []any) (any, error)

// Library is a module scripts load with require(name).
type Library map[string]Func

// Script is a compiled script.
type Script struct {
	name  string
	proto *lua.FunctionProto
	libs  map[string]Library
}

// Compile parses source once; name appears in error messages.
func Compile(name, source string, libs map[string]Library) (*Script, error) {
	chunk, err := parse.Parse(strings.NewReader(source), name)
	if err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, fmt.Errorf("compiling: %w", err)
	}
	return &Script{name: name, proto: proto, libs: libs}, nil
}

// ErrTimeout and ErrMemory say which bound stopped a call.
var (
	ErrTimeout = errors.New("exceeded its time bound")
	ErrMemory  = errors.New("exceeded its allocation bound")
)

// Call runs the script's top level, then calls its global function fn with
// args and returns nret results as plain values. ref, when not nil, is the
// value an object result derives from: an empty Lua table becomes {} or []
// as the field at the same place in ref is (Lua cannot tell them apart), and
// is dropped where ref has no such field. With nret 0, Call only checks that
// the script defines fn.
func (s *Script) Call(ctx context.Context, limits Limits, fn string, nret int, ref any, args ...any) ([]any, error) {
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, limits.Timeout, fmt.Errorf("%w (%s)", ErrTimeout, limits.Timeout))
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := watchAllocations(ctx, cancel, limits.MaxAllocBytes)
	defer stop()

	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       limits.MaxCallDepth,
		RegistrySize:        1024,
		RegistryMaxSize:     limits.MaxStackSlots,
		MinimizeStackMemory: true,
	})
	defer L.Close()
	if err := s.sandbox(L, limits); err != nil {
		return nil, fmt.Errorf("preparing the sandbox: %w", err)
	}
	L.SetContext(ctx)

	results, err := s.run(L, fn, nret, args)
	if err != nil {
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); cause != nil {
				return nil, cause
			}
		}
		return nil, err
	}
	out := make([]any, len(results))
	for i, r := range results {
		v, err := fromLua(r, ref, 0)
		if err != nil {
			return nil, fmt.Errorf("result %d of %s: %w", i+1, fn, err)
		}
		out[i] = v
	}
	return out, nil
}

func (s *Script) run(L *lua.LState, fn string, nret int, args []any) (results []lua.LValue, err error) {
	defer func() {
		// gopher-lua panics on some internal limits (stack overflow) even in
		// protected mode; a script must never take the controller down.
		if p := recover(); p != nil {
			err = fmt.Errorf("script failed: %v", p)
		}
	}()
	top := L.NewFunctionFromProto(s.proto)
	L.Push(top)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		return nil, err
	}
	L.SetTop(0)
	f := L.GetGlobal(fn)
	if f.Type() != lua.LTFunction {
		return nil, fmt.Errorf("the script defines no function %s", fn)
	}
	if nret == 0 {
		return nil, nil
	}
	lvArgs := make([]lua.LValue, len(args))
	for i, a := range args {
		v, err := toLua(L, a, 0)
		if err != nil {
			return nil, fmt.Errorf("argument %d of %s: %w", i+1, fn, err)
		}
		lvArgs[i] = v
	}
	if err := L.CallByParam(lua.P{Fn: f, NRet: nret, Protect: true}, lvArgs...); err != nil {
		return nil, err
	}
	results = make([]lua.LValue, nret)
	for i := range results {
		results[i] = L.Get(i + 1)
	}
	return results, nil
}

// watchAllocations cancels ctx when the process has allocated more than limit
// bytes since the call began.
func watchAllocations(ctx context.Context, cancel context.CancelCauseFunc, limit uint64) (stop func()) {
	if limit == 0 {
		return func() {}
	}
	start := allocated()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if allocated()-start > limit {
					cancel(fmt.Errorf("%w (%d MiB)", ErrMemory, limit>>20))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// allocated is the process's cumulative heap allocation.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
