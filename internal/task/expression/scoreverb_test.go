package expression

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
)

// TestScoreVerb checks that `score expression` prints one line per input in
// input order, a failure (an empty line, garbage, an expression that does
// not parse) as the failure score, a tab and the reason, and returns an
// error after printing everything when any failed.
func TestScoreVerb(t *testing.T) {
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := NewObjective(DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	good, err := obj.TryScore("x + 1")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := inputLines(strings.NewReader("x + 1\n\nx+(\n  \n%%garbage\nx+1"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x + 1", "", "x+(", "", "%%garbage", "x+1"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("input lines %q, want %q (blank lines kept)", lines, want)
	}
	env := testEnv(t, "")
	err = tk.Score(env, lines)
	if err == nil || !strings.Contains(err.Error(), "4 of 6 expressions failed") {
		t.Errorf("error %v, want 4 of 6 failed", err)
	}
	got := strings.Split(strings.TrimSuffix(env.Stdout.(*bytes.Buffer).String(), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("%d output lines for %d inputs: %q", len(got), len(lines), got)
	}
	g := strconv.FormatFloat(good, 'g', -1, 64)
	fail := strconv.FormatFloat(FailureScore, 'g', -1, 64) + "\t"
	for i, want := range []string{g, fail + "empty line", fail + `expression "x+("`, fail + "empty line", fail + `"%%garbage"`, g} {
		ok := got[i] == want
		if reason, failed := strings.CutPrefix(want, fail); failed {
			ok = strings.HasPrefix(got[i], fail) && strings.Contains(got[i], reason)
		}
		if !ok {
			t.Errorf("line %d: %q, want %q", i+1, got[i], want)
		}
	}

	env = testEnv(t, "")
	if err := tk.Score(env, []string{"x", "sin(x)"}); err != nil {
		t.Errorf("all valid: %v", err)
	}
	if n := strings.Count(env.Stdout.(*bytes.Buffer).String(), "\n"); n != 2 {
		t.Errorf("all valid: %d lines, want 2", n)
	}
}
