// Package datadir guards an atoll data directory so that only one process
// uses it at a time. Two etcd servers on one data directory would corrupt
// it; a clear error is the only safe answer.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the name of the lock file inside a data directory.
const LockFile = "atoll.lock"

// ErrInUse is returned (wrapped) when another process holds the directory.
var ErrInUse = errors.New("data directory is in use")

// Lock is an exclusive advisory lock on a data directory. The kernel drops
// it when the process exits, however it exits, so a crash never leaves a
// stale lock behind.
type Lock struct {
	file *os.File
}

// Acquire creates dir if needed and locks it without blocking.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readPID(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			abs, _ := filepath.Abs(dir)
			return nil, fmt.Errorf("%w: %s is used by another atoll process%s; stop it or choose another --data-dir",
				ErrInUse, abs, holder)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{file: f}, nil
}

// Release unlocks the directory.
func (l *Lock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close() // closing the descriptor drops the flock
	l.file = nil
	return err
}

func readPID(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	return " (pid " + pid + ")"
}
