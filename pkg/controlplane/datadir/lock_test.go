package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestAcquireIsExclusive(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(dir)
	if err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	_, err = Acquire(dir)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Acquire: got %v, want ErrInUse", err)
	}
	if !strings.Contains(err.Error(), "pid ") || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("error should name the holder and the way out, got %q", err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	_ = again.Release()
}

func TestInheritSharesTheLock(t *testing.T) {
	dir := t.TempDir()
	parent, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Release() })
	// What a child gets through ExtraFiles: another descriptor of the same
	// open file.
	fd, err := syscall.Dup(int(parent.File().Fd()))
	if err != nil {
		t.Fatal(err)
	}
	child, err := Inherit(dir, os.NewFile(uintptr(fd), "lock"))
	if err != nil {
		t.Fatalf("Inherit: %v", err)
	}
	if err := child.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrInUse) {
		t.Errorf("Acquire after the child released its copy: got %v, want ErrInUse (the parent still holds it)", err)
	}
}

func TestInheritRejects(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string) *os.File{
		"no file": func(*testing.T, string) *os.File { return nil },
		"another file": func(t *testing.T, dir string) *os.File {
			f, err := os.Create(filepath.Join(dir, "other"))
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"lock file not locked by us": func(t *testing.T, dir string) *os.File {
			holder, err := Acquire(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = holder.Release() })
			f, err := os.Open(filepath.Join(dir, LockFile))
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, LockFile), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Inherit(dir, open(t, dir)); err == nil {
				t.Error("Inherit succeeded, want an error")
			}
		})
	}
}
