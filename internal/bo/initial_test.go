package bo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// TestReadCurveInitial: a run whose configuration counts initial oracle
// calls has them read from InitialFile, before its distinct evaluations in
// OracleCalls; a missing or short file is an error; WriteInitial writes the
// calls of a new run and leaves an existing run's file alone (Run refuses
// other data on resume).
func TestReadCurveInitial(t *testing.T) {
	dir := t.TempDir()
	initial := []Evaluation{{"x", 0.2}, {"y", 0.7}, {"z", 0.1}}
	if err := WriteInitial(dir, initial); err != nil {
		t.Fatal(err)
	}
	write := func(cfg map[string]string) {
		b, _ := json.Marshal(cfg)
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(map[string]string{"task": "molecule", "maximize": "true", InitialCallsField: "3"})
	err := numpy.WriteNPZ(filepath.Join(dir, ResultsFile), []numpy.Array{
		{Name: "opt_points", Shape: []int{4}, Data: []string{"a", "x", "", "b"}},
		{Name: "opt_point_properties", Shape: []int{4}, Data: []float64{0.5, 0.2, 0, 0.9}},
		{Name: "opt_known", Shape: []int{4}, Data: []int64{0, 1, 0, 0}},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{0.7}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(initial), Evaluation{"a", 0.5}, Evaluation{"b", 0.9})
	if !slices.Equal(c.Initial, initial) || !slices.Equal(c.OracleCalls(), want) || c.Distinct() != 2 {
		t.Errorf("initial %v, oracle calls %v, %d distinct; want %v then a, b", c.Initial, c.OracleCalls(), c.Distinct(), initial)
	}
	// The run exists now: its file stays as it is.
	if err := WriteInitial(dir, initial[:2]); err != nil {
		t.Errorf("resume: %v", err)
	}
	if got, err := ReadInitial(dir); err != nil || !slices.Equal(got, initial) {
		t.Errorf("after a resume with other calls the file holds %v, %v; want the run's %v", got, err, initial)
	}
	write(map[string]string{"task": "molecule", "maximize": "true", InitialCallsField: "4"})
	if _, err := ReadCurve(dir); err == nil || !strings.Contains(err.Error(), "counts 4") {
		t.Errorf("4 counted, 3 in the file: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, InitialFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCurve(dir); err == nil || !strings.Contains(err.Error(), "initial oracle calls") {
		t.Errorf("initial calls counted but no file: %v", err)
	}
	write(map[string]string{"task": "molecule", "maximize": "true"})
	if c, err := ReadCurve(dir); err != nil || c.Initial != nil || len(c.OracleCalls()) != 2 {
		t.Errorf("no initial calls: %v %v", c.OracleCalls(), err)
	}
}

// TestGroupDrawnStart: runs whose labelled start was drawn with their seed
// (initial oracle calls) group across seeds although their data digests
// differ; runs with given data of different digests do not.
func TestGroupDrawnStart(t *testing.T) {
	run := func(seed, digest string, drawn bool) Curve {
		fs := []Field{{"task", "molecule"}, {"seed", seed}, {"data-sha256", digest}, {"strategy", "bo"}}
		if drawn {
			fs = append(fs, Field{InitialCallsField, "10"})
		}
		return Curve{Fields: fs, Best: []float64{0, 1}}
	}
	if g := GroupCurves([]Curve{run("0", "a", true), run("1", "b", true)}); len(g) != 1 || g[0].Seeds != 2 {
		t.Errorf("drawn starts of two seeds: %d groups, want 1 of 2 seeds", len(g))
	}
	if g := GroupCurves([]Curve{run("0", "a", false), run("1", "b", false)}); len(g) != 2 {
		t.Errorf("given data of two digests: %d groups, want 2", len(g))
	}
}
