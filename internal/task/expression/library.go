package expression

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/datadir"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// The expression task's data import (data expression --expressions FILE).
const (
	optExpressions = "expressions"
	// UserScoresFile, beside an imported data file, holds the library's
	// own scores, one per line, which optimize --data-scores takes as a
	// program objective's.
	UserScoresFile = "user_scores.txt"
)

// ReadLibrary reads a user's library of expressions: one per non-blank
// line, optionally followed by a tab and a score (expressions have blanks,
// so only a tab separates the score); either every line has a score or
// none has. An expression outside the grammar, a score that is not a
// finite number, or a score on some lines only is an error naming the file
// and the line. The expressions are returned in canonical spaced form.
func ReadLibrary(path string) (exprs []string, scores []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--%s: %w", optExpressions, err)
	}
	defer f.Close()
	exprs, scores, err = readLibrary(f, path)
	if err != nil {
		return nil, nil, fmt.Errorf("--%s: %w", optExpressions, err)
	}
	return exprs, scores, nil
}

func readLibrary(r io.Reader, name string) ([]string, []float64, error) {
	var exprs []string
	var scores []float64
	scored, first := false, 0
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, score, hasScore := strings.Cut(sc.Text(), "\t")
		text = strings.TrimSpace(text)
		if text == "" && !hasScore {
			continue
		}
		if len(exprs) == 0 {
			scored, first = hasScore, line
		}
		switch {
		case scored && !hasScore:
			return nil, nil, fmt.Errorf("%s:%d: no score (a tab, then a number), but line %d has one: give every line a score or none", name, line, first)
		case !scored && hasScore:
			return nil, nil, fmt.Errorf("%s:%d: a tab and a score, but line %d has none: give every line a score or none", name, line, first)
		}
		canon, err := Canonical(text)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: expression %q: %w", name, line, text, err)
		}
		if scored {
			v, err := strconv.ParseFloat(strings.TrimSpace(score), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%s:%d: score %q is not a finite number", name, line, strings.TrimSpace(score))
			}
			scores = append(scores, v)
		}
		exprs = append(exprs, canon)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(exprs) == 0 {
		return nil, nil, fmt.Errorf("%s: no expressions", name)
	}
	return exprs, scores, nil
}

// importLibrary writes the library of --expressions as the data set of
// dir (dir/expression/DataFileName, and its scores as UserScoresFile), so
// that train and optimize --data-dir dir use it. Both files are written
// through a temporary file and a rename.
func importLibrary(env *task.Env, dir string) error {
	exprs, scores, err := ReadLibrary(env.Opts.String(optExpressions))
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "expression")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(out, DataFileName), exprs); err != nil {
		return err
	}
	note := "no score column"
	scoresPath := filepath.Join(out, UserScoresFile)
	if scores != nil {
		text := make([]string, len(scores))
		for i, v := range scores {
			text[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := writeLines(scoresPath, text); err != nil {
			return err
		}
		note = "their scores in " + scoresPath + " (optimize --" + task.DataScoresOption + ")"
	} else if err := os.Remove(scoresPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fmt.Fprintf(env.Stdout, "expressions %d from %s, %s: %s (train and optimize with --data-dir %s)\n", len(exprs),
		env.Opts.String(optExpressions), note, filepath.Join(out, DataFileName), dir)
	return nil
}

// writeLines writes lines atomically.
func writeLines(path string, lines []string) error {
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
		return err
	})
}

// userScores returns the scores of an imported library (UserScoresFile
// beside the data file that the data directories hold) for its n
// expressions.
func userScores(env *task.Env, n int) ([]float64, error) {
	dirs, _, err := datadir.Dirs(env.DataDir)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		path, ok := findFile(d)
		if !ok {
			continue
		}
		sp := filepath.Join(filepath.Dir(path), UserScoresFile)
		b, err := os.ReadFile(sp)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--%s: no %s beside %s (import your library with its scores: data expression --%s FILE)",
				task.DataScoresOption, UserScoresFile, path, optExpressions)
		}
		if err != nil {
			return nil, err
		}
		fields := strings.Fields(string(b))
		if len(fields) != n {
			return nil, fmt.Errorf("--%s: %s has %d scores for %d expressions", task.DataScoresOption, sp, len(fields), n)
		}
		out := make([]float64, n)
		for i, f := range fields {
			if out[i], err = strconv.ParseFloat(f, 64); err != nil {
				return nil, fmt.Errorf("--%s: %s:%d: %w", task.DataScoresOption, sp, i+1, err)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("--%s: no expression data file in %v", task.DataScoresOption, dirs)
}
