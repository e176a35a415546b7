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
		_ = f.Close()
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

// File is the open lock file. Passing it to a child process (exec.Cmd
// ExtraFiles) shares the lock with that child: the flock belongs to the open
// file, so it is held until the parent and the child have both closed it.
func (l *Lock) File() *os.File { return l.file }

// Inherit adopts a lock that the parent process took on dir and passed as
// the open file f (see File). It checks that f is dir's lock file and holds
// its lock, so a child can never run in a directory it does not own.
func Inherit(dir string, f *os.File) (*Lock, error) {
	if f == nil {
		return nil, fmt.Errorf("no inherited lock file for %s", dir)
	}
	path := filepath.Join(dir, LockFile)
	var want, got syscall.Stat_t
	if err := syscall.Stat(path, &want); err != nil {
		return nil, fmt.Errorf("inherited lock: %s: %w", path, err)
	}
	if err := syscall.Fstat(int(f.Fd()), &got); err != nil {
		return nil, fmt.Errorf("inherited lock: %w", err)
	}
	if got.Dev != want.Dev || got.Ino != want.Ino {
		return nil, fmt.Errorf("inherited lock: descriptor %d is not %s", f.Fd(), path)
	}
	// Locking an open file that already holds the lock succeeds at once;
	// any other holder makes this fail, and then the parent never had it.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, fmt.Errorf("inherited lock on %s is not held: %w", path, err)
	}
	return &Lock{file: f}, nil
}
