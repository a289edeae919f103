package molecule

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
)

// TestScoreVerb checks that `score molecule` prints one line per input in
// input order, "SMILES<tab>score", a failure (an empty line, garbage, a
// molecule RDKit cannot kekulize) with the failure score and the reason as
// a third field, and returns an error after printing everything when any
// failed.
func TestScoreVerb(t *testing.T) {
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := inputLines(strings.NewReader("CCO 1.5\n\nC1CC\n   \nc1cccc1\tunkekulizable\nc1ccccc1"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"CCO", "", "C1CC", "", "c1cccc1", "c1ccccc1"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("input lines %q, want %q (blank lines kept, the first field of each)", lines, want)
	}
	var out bytes.Buffer
	env := &task.Env{Opts: task.Values{optRDKitLog: false}, Stdout: &out, Stderr: &bytes.Buffer{}}
	err = tk.Score(env, lines)
	if err == nil || !strings.Contains(err.Error(), "4 of 6 molecules failed") {
		t.Errorf("error %v, want 4 of 6 failed", err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("%d output lines for %d inputs: %q", len(got), len(lines), got)
	}
	fail := strconv.FormatFloat(FailureScore, 'g', -1, 64)
	for i, reason := range []string{"", "empty SMILES", "C1CC", "empty SMILES", "kekulize", ""} {
		fs := strings.Split(got[i], "\t")
		if fs[0] != lines[i] {
			t.Errorf("line %d: %q does not start with its input %q", i+1, got[i], lines[i])
		}
		if reason == "" {
			v, err := Score(lines[i])
			if err != nil || len(fs) != 2 || fs[1] != strconv.FormatFloat(v, 'g', -1, 64) {
				t.Errorf("line %d: %q, want SMILES and score %v", i+1, got[i], v)
			}
			continue
		}
		if len(fs) != 3 || fs[1] != fail || !strings.Contains(fs[2], reason) {
			t.Errorf("line %d: %q, want SMILES, %s and a reason naming %q", i+1, got[i], fail, reason)
		}
	}
}
