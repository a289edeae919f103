package bo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrRunDirInUse is wrapped by the error of LockDir (and so of Run and
// CheckRunDir) when another process holds the run directory: the run was not
// started, and may be resumed once the other process ends.
var ErrRunDirInUse = errors.New("in use by another process")

// LockFile is the file of a run directory that its running process holds an
// exclusive lock on.
const LockFile = ".lock"

// Lock is an exclusive advisory lock (flock) on a run directory, held for
// the life of a run so that a second process on the same directory fails at
// once instead of evaluating what the first evaluates or interleaving its
// journal writes with the first's. The kernel drops it when the process
// dies, kill -9 included.
type Lock struct {
	dir string
	f   *os.File
}

// LockDir takes the lock of the run directory dir, creating dir when
// missing, and fails at once, naming the holder's pid, when another process
// (or another Lock of this one) has it. A caller that evaluates anything
// for the run before Run (a labelled start scored by the objective) takes
// it first and hands it to Run through Options.Lock, so that the run holds
// one lock from its first evaluation to its end.
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bo: run directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("bo: lock run directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			holder := strings.TrimSpace(string(b))
			if holder == "" {
				holder = "unknown"
			}
			return nil, fmt.Errorf("bo: run directory %s is %w (pid %s); wait for it to end or stop it", dir, ErrRunDirInUse, holder)
		}
		return nil, fmt.Errorf("bo: lock %s: %w", path, err)
	}
	// The pid is for the message above only; the lock is the flock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{dir: dir, f: f}, nil
}

// Holds reports whether l is the lock of the run directory dir.
func (l *Lock) Holds(dir string) bool {
	a, errA := filepath.Abs(l.dir)
	b, errB := filepath.Abs(dir)
	return errA == nil && errB == nil && a == b
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("bo: unlock %s: %w", l.dir, err)
	}
	return nil
}
