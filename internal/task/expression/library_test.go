package expression

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
)

// TestImportLibrary: data expression --expressions writes the user's
// expressions (canonical) and their tab-separated scores where --data-dir
// finds them, and optimize's data set with --data-scores is all of them
// with those scores; a bad line is an error naming the file and the line.
func TestImportLibrary(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "mine.txt")
	if err := os.WriteFile(src, []byte("x*2\t0.5\n\nsin(x) + 1\t-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "data")
	var stdout strings.Builder
	env := &task.Env{Opts: task.Values{optExpressions: src}, Stdout: &stdout}
	if err := buildData(env, out); err != nil {
		t.Fatal(err)
	}
	env = &task.Env{Opts: task.Values{optTarget: DefaultTarget, task.DataScoresOption: true}, DataDir: out, Stderr: &stdout}
	exprs, scores, _, err := dataset(env)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(exprs, ";") != "x * 2;sin( x ) + 1" || len(scores) != 2 || scores[0] != 0.5 || scores[1] != -2 {
		t.Errorf("data set %q, scores %v", exprs, scores)
	}
	for _, c := range []struct{ text, want string }{
		{"x\t1\nx + 1\n", "mine.txt:2: no score"},
		{"x\nx + 1\t1\n", "mine.txt:2: a tab and a score"},
		{"x\tmany\n", `mine.txt:1: score "many"`},
		{"x +\n", "mine.txt:1: expression"},
	} {
		if err := os.WriteFile(src, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		env := &task.Env{Opts: task.Values{optExpressions: src}, Stdout: &stdout}
		if err := buildData(env, filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
