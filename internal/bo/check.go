package bo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckRunDir checks, before any work, that Run will be able to use
// opts.Dir: the directory (or, when it does not exist yet, its nearest
// existing parent) takes new files, it is not in use by another process,
// and it holds no run unless opts.Resume (nor a journal without its
// configuration), a run when opts.Resume (checkResume). It creates nothing. Run checks all of this again; the
// point is to refuse before hours of data preparation, not after.
func CheckRunDir(opts Options) error {
	dir := opts.Dir
	if dir == "" {
		return errors.New("bo: no run directory")
	}
	if err := checkResume(opts); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkWritable(dir, nearestExisting(dir))
	case err != nil:
		return fmt.Errorf("bo: run directory: %w", err)
	case !st.IsDir():
		return fmt.Errorf("bo: run directory %s is not a directory", dir)
	}
	if err := checkWritable(dir, dir); err != nil {
		return err
	}
	_, cfgErr := os.Stat(filepath.Join(dir, ConfigFile))
	_, jErr := os.Stat(filepath.Join(dir, JournalFile))
	switch {
	case cfgErr != nil && jErr == nil:
		return fmt.Errorf("bo: %s has a journal but no %s; cannot tell which run it belongs to", dir, ConfigFile)
	case cfgErr == nil && !opts.Resume:
		return fmt.Errorf("bo: %s already holds a run; pass --resume to continue it or choose another directory", dir)
	}
	if opts.Lock != nil && opts.Lock.Holds(dir) {
		return nil // the caller holds it
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err == nil {
		l, err := LockDir(dir)
		if err != nil {
			return err
		}
		return l.Unlock()
	}
	return nil
}

// checkResume refuses opts.Resume on a directory that holds no run: a
// mistyped --run-dir must not start a new run in its place. A directory
// holds a run once one took its lock (LockFile, left in place): a run
// stopped before its first journal line, while its labelled start was
// being scored, is resumed too.
func checkResume(opts Options) error {
	if !opts.Resume {
		return nil
	}
	for _, name := range []string{ConfigFile, JournalFile, LockFile} {
		if _, err := os.Stat(filepath.Join(opts.Dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("bo: --resume: %s holds no run (no %s, %s or %s): check the path, or leave out --resume to start a new run there",
		opts.Dir, ConfigFile, JournalFile, LockFile)
}

// nearestExisting returns the closest ancestor of path that exists.
func nearestExisting(path string) string {
	for p := filepath.Dir(filepath.Clean(path)); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			return p
		}
	}
}

// checkWritable checks that dir (where the run directory dir is to be)
// is a directory that takes a new file: one is created and removed.
func checkWritable(runDir, dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("bo: run directory %s: %s is not a directory", runDir, dir)
	}
	f, err := os.CreateTemp(dir, ".tlbo-native-probe-*")
	if err != nil {
		return fmt.Errorf("bo: run directory %s: %s is not writable: %w", runDir, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
