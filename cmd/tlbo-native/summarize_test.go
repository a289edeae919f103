package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/runsummary"
)

// TestSummarize: summarize --drop-latents on a copy of a committed run with
// its gzipped journal writes the summary runsummary.Make gives, prints its
// line and leaves results.npz without latent points; without a directory,
// or on one without a run, it fails naming what is missing.
func TestSummarize(t *testing.T) {
	src := filepath.Join("..", "..", "docs", "experiment", "results", "molecule-full-cmp", "tlbo-seed0")
	dir := filepath.Join(t.TempDir(), "tlbo-seed0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bo.ConfigFile, bo.ResultsFile, bo.JournalFile + ".gz", runsummary.File} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if os.IsNotExist(err) && f == runsummary.File {
			continue // before the committed runs were summarised
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := runsummary.Make(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runOut("summarize", "--drop-latents", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, want.String()) || !strings.Contains(out, "tlbo-seed0: 500 distinct evaluations") {
		t.Errorf("output %q, want the line %q", out, want.String())
	}
	got, err := runsummary.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary.json %+v\nwant %+v", got, want)
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		if a.Name == "opt_latents" {
			t.Errorf("results.npz still holds opt_latents after --drop-latents")
		}
	}

	if _, err := runOut("summarize"); err == nil || !strings.Contains(err.Error(), "no run directory") {
		t.Errorf("no directory: %v, want an error saying so", err)
	}
	empty := t.TempDir()
	if _, err := runOut("summarize", empty); err == nil || !strings.Contains(err.Error(), bo.ConfigFile) {
		t.Errorf("a directory without a run: %v, want an error naming %s", err, bo.ConfigFile)
	}
}
