package datadir

import (
	"errors"
	"strings"
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
