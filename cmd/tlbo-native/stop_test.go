package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// molecules returns n small molecules, one a line.
func molecules(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("C", 1+i%12) + []string{"O", "N", "C(=O)O", "c1ccccc1"}[i%4]
	}
	return out
}

// TestBatchStopsOnSIGTERM: SIGTERM stops `molecule tree` and `data
// molecule --smiles` between molecules, with status 1 and a message saying
// so: the tree keeps the lines done, in input order; the import writes
// nothing and removes the output directory it made. (They once went on to
// the end of the file, or died of the signal without a word.)
func TestBatchStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	in := molecules(20000)
	lib := filepath.Join(dir, "lib.smi")
	if err := os.WriteFile(lib, []byte(strings.Join(in, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(stdin string, args ...string) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
		t.Helper()
		cmd := cliChild(t, &bytes.Buffer{}, nil, args...)
		cmd.Stdout = nil // read through StdoutPipe below
		if stdin != "" {
			f, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = f
		}
		stderr := &strings.Builder{}
		cmd.Stderr = stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Not a timing assertion: only so that a child that never stops
		// fails the test instead of hanging it.
		watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		t.Cleanup(func() { watchdog.Stop() })
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		return cmd, sc, stderr
	}
	stopped := func(what string, cmd *exec.Cmd, stderr *strings.Builder, want string) {
		t.Helper()
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s after SIGTERM: %v, stderr %q; want status 1 and %q", what, err, stderr.String(), want)
		}
	}

	cmd, sc, stderr := start(lib, "molecule", "tree", "--workers", "2")
	var lines []string
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "{") {
			if lines = append(lines, line); len(lines) == 1 {
				cmd.Process.Signal(syscall.SIGTERM) // the handler is set: a line is out
			}
		}
	}
	stopped("molecule tree", cmd, stderr, "molecule tree: interrupted: ")
	if len(lines) == 0 || len(lines) == len(in) {
		t.Errorf("molecule tree wrote %d lines of %d after SIGTERM", len(lines), len(in))
	}
	for i, line := range lines {
		var got struct {
			Smiles string `json:"smiles"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil || got.Smiles != in[i] || got.Error != "" {
			t.Fatalf("line %d: %s (%v), want the tree of %s", i+1, line, err, in[i])
		}
	}

	out := filepath.Join(dir, "data")
	cmd, sc, stderr = start("", "data", "molecule", "--smiles", lib, "--out", out, "--workers", "2")
	// The output directory is made after the handler is set, just before
	// the molecules (the deadline only keeps a broken child from hanging
	// the test).
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(out); err == nil {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for sc.Scan() {
	}
	stopped("data molecule", cmd, stderr, "interrupted after ")
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data molecule's output directory after SIGTERM: %v, want it removed", err)
	}
}
