package bo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRunDir: the run directory is checked before any work, creating
// nothing: a new one under a writable parent passes, an existing run without
// --resume, a journal without its configuration, a directory in use, a file
// and an unwritable place are refused, named.
func TestCheckRunDir(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "b")
	if err := CheckRunDir(Options{Dir: fresh}); err != nil {
		t.Errorf("new directory: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the check created %v", entries)
	}
	run := filepath.Join(root, "run")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(run, 0o755))
	must(os.WriteFile(filepath.Join(run, JournalFile), nil, 0o644))
	expect := func(what string, err error, words ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	expect("journal without configuration", CheckRunDir(Options{Dir: run, Resume: true}), ConfigFile)
	must(os.WriteFile(filepath.Join(run, ConfigFile), []byte("{}"), 0o644))
	expect("existing run", CheckRunDir(Options{Dir: run}), "already holds a run", "--resume")
	if err := CheckRunDir(Options{Dir: run, Resume: true}); err != nil {
		t.Errorf("resume: %v", err)
	}
	l, err := LockDir(run)
	must(err)
	expect("locked", CheckRunDir(Options{Dir: run, Resume: true}), "in use", "pid")
	must(l.Unlock())
	if err := CheckRunDir(Options{Dir: run, Resume: true}); err != nil {
		t.Errorf("after the lock is released: %v", err)
	}
	file := filepath.Join(root, "file")
	must(os.WriteFile(file, nil, 0o644))
	expect("a file", CheckRunDir(Options{Dir: file}), "not a directory")
	expect("under a file", CheckRunDir(Options{Dir: filepath.Join(file, "run")}), "not a directory")
	expect("unwritable", CheckRunDir(Options{Dir: "/proc/self/run"}), "/proc/self", "not writable")
}
