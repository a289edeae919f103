package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TestBenchLoop: bench loop prints a committed run's cost from its gzipped
// journal (each stage and a total line), --json the same numbers as
// bo.ReadLoopCost, for each run directory named by --run-dir or argument;
// without one, or with a directory without a journal, it fails naming it.
func TestBenchLoop(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "experiment", "results", "molecule-full-cmp", "tlbo-seed0")
	want, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runOut("bench", "loop", "--run-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("%d distinct evaluations, %d queries, %d model versions, %.1f CPU s", want.Evaluations, want.Queries,
		want.Versions, want.Total.CPU)
	if !strings.Contains(out, head) {
		t.Errorf("output lacks %q:\n%s", head, out)
	}
	for _, s := range append(want.Stages, want.Total) {
		row := fmt.Sprintf("%s  %.1f  %.1f  %.1f%%  %.2f", s.Stage, s.Seconds, s.CPU, 100*s.Share, *s.PerEvaluation)
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), row) {
			t.Errorf("output lacks the row %q:\n%s", row, out)
		}
	}

	out, err = runOut("bench", "loop", "--json", "--run-dir", dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []bo.LoopCost
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], want) || !reflect.DeepEqual(got[1], want) {
		t.Errorf("--json: %+v\nwant twice %+v", got, want)
	}

	if _, err := runOut("bench", "loop"); err == nil || !strings.Contains(err.Error(), "--run-dir") {
		t.Errorf("no run directory: %v, want an error naming --run-dir", err)
	}
	empty := t.TempDir()
	if _, err := runOut("bench", "loop", "--run-dir", dir, "--run-dir", empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("run directory without a journal: %v, want an error naming %s", err, empty)
	}
}
