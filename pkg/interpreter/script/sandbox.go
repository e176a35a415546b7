package script

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// unsafeBase are the base functions a script may not call: they reach files,
// load code at run time, or step around the sandbox through metatables and
// environments (http://lua-users.org/wiki/SandBoxes; Karmada removes the
// same set).
var unsafeBase = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
	"rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy", "_printregs", "print",
}

// unsafeOs are the os functions that touch the process or the file system;
// os.time, os.date, os.clock and os.difftime stay.
var unsafeOs = []string{"execute", "exit", "getenv", "remove", "rename", "setenv", "setlocale", "tmpname"}

// sandbox opens the allowed libraries in L and installs require, which knows
// only the script's Go libraries.
func (s *Script) sandbox(L *lua.LState, limits Limits) error {
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return fmt.Errorf("opening %s: %w", lib.name, err)
		}
	}
	g := L.G.Global
	for _, name := range unsafeBase {
		name := name
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s is not available to interpreter scripts", name)
			return 0
		}))
	}
	if os, ok := g.RawGetString(lua.OsLibName).(*lua.LTable); ok {
		for _, name := range unsafeOs {
			os.RawSetString(name, lua.LNil)
		}
	}
	if str, ok := g.RawGetString(lua.StringLibName).(*lua.LTable); ok {
		str.RawSetString("rep", L.NewFunction(boundedRep(limits.MaxStringBytes)))
	}
	modules := map[string]*lua.LTable{}
	g.RawSetString("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		if m, ok := modules[name]; ok {
			L.Push(m)
			return 1
		}
		lib, ok := s.libs[name]
		if !ok {
			L.RaiseError("module %q is not available to interpreter scripts", name)
			return 0
		}
		m := L.NewTable()
		for fname, fn := range lib {
			m.RawSetString(fname, L.NewFunction(goFunc(name+"."+fname, fn)))
		}
		modules[name] = m
		L.Push(m)
		return 1
	}))
	return nil
}

// goFunc adapts a library Func to Lua.
func goFunc(name string, fn Func) lua.LGFunction {
	return func(L *lua.LState) int {
		args := make([]any, L.GetTop())
		for i := range args {
			v, err := fromLua(L.Get(i+1), nil, 0)
			if err != nil {
				L.RaiseError("%s: argument %d: %v", name, i+1, err)
				return 0
			}
			args[i] = v
		}
		out, err := fn(args)
		if err != nil {
			L.RaiseError("%s: %v", name, err)
			return 0
		}
		v, err := toLua(L, out, 0)
		if err != nil {
			L.RaiseError("%s: result: %v", name, err)
			return 0
		}
		L.Push(v)
		return 1
	}
}

// boundedRep is string.rep refusing results over max bytes: one call could
// otherwise allocate gigabytes before any other bound notices.
func boundedRep(limit int) lua.LGFunction {
	return func(L *lua.LState) int {
		str := L.CheckString(1)
		n := L.CheckInt(2)
		sep := L.OptString(3, "")
		if n <= 0 {
			L.Push(lua.LString(""))
			return 1
		}
		if size := len(str)*n + len(sep)*(n-1); size > limit || size < 0 {
			L.RaiseError("string.rep: result of %d bytes exceeds the bound of %d", size, limit)
			return 0
		}
		parts := make([]string, n)
		for i := range parts {
			parts[i] = str
		}
		L.Push(lua.LString(strings.Join(parts, sep)))
		return 1
	}
}
