package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// trainCLI runs the train verb with args.
func trainCLI(args ...string) error {
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{trainCommand()}}
	return app.Run(append([]string{"tlbo-native", "train", "--task", "expression"}, args...))
}

// TestTrainGuardsOutput: train refuses to overwrite a checkpoint without
// --resume or --force, and checks the output directory before reading any
// data (the data directories here are empty, so reaching the data set would
// fail with another error).
func TestTrainGuardsOutput(t *testing.T) {
	noData := t.TempDir()
	dir := t.TempDir()
	out := filepath.Join(dir, "vae.pt")
	expectErr := func(what string, err error, words ...string) {
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
	base := []string{"--data-dir", noData, "--epochs", "1"}

	// An existing checkpoint (any of its files) is refused.
	for _, f := range []string{"vae.pt", "vae.json", "vae.last.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr("existing "+f, trainCLI(append(base, "--out", out)...), "--out "+out, f, "--resume", "--force")
		os.Remove(filepath.Join(dir, f))
	}
	// --force removes the old files, then the run goes on to the data set.
	for _, f := range []string{"vae.pt", "vae.json", "vae.adam.pt", "vae.last.pt", "vae.last.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expectErr("--force", trainCLI(append(base, "--out", out, "--force")...), noData)
	if left, _ := filepath.Glob(filepath.Join(dir, "vae*")); len(left) > 0 {
		t.Errorf("--force left %v", left)
	}
	expectErr("--resume without a checkpoint", trainCLI(append(base, "--out", out, "--resume")...), "--resume", "no checkpoint")
	expectErr("--resume and --force", trainCLI(append(base, "--out", out, "--resume", "--force")...), "--resume", "--force")

	// A missing or unwritable directory is named before the data set is read.
	missing := filepath.Join(dir, "nonesuch", "vae.pt")
	expectErr("missing directory", trainCLI(append(base, "--out", missing)...), filepath.Join(dir, "nonesuch"))
	expectErr("a directory as --out", trainCLI(append(base, "--out", dir)...), "is a directory")
	// /proc takes no new file, even from root.
	expectErr("unwritable directory", trainCLI(append(base, "--out", "/proc/self/vae.pt")...), "/proc/self", "not writable")
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(ro, 0o755)
		expectErr("read-only directory", trainCLI(append(base, "--out", filepath.Join(ro, "vae.pt"))...), ro, "not writable")
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the checks left files in %s: %v", dir, entries)
	}
}
