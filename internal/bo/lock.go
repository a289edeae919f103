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

// LockFile is the file of a run directory that its running process holds an
// exclusive lock on.
const LockFile = ".lock"

// dirLock is an exclusive advisory lock (flock) on a run directory, held
// for the life of a run so that a second process on the same directory
// fails at once instead of interleaving its journal writes with the
// first's. The kernel drops it when the process dies, kill -9 included.
type dirLock struct{ f *os.File }

// lockDir takes the lock of dir, naming the holder's pid when another
// process has it.
func lockDir(dir string) (*dirLock, error) {
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
			return nil, fmt.Errorf("bo: run directory %s is in use by another process (pid %s); wait for it to end or stop it", dir, holder)
		}
		return nil, fmt.Errorf("bo: lock %s: %w", path, err)
	}
	// The pid is for the message above only; the lock is the flock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// unlock releases the lock.
func (l *dirLock) unlock() error { return l.f.Close() }
