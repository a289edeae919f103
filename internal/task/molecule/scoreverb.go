package molecule

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// scoreArgs prints "SMILES<tab>score" (under --objective) for each SMILES of args (or of the
// first field of each of stdin's lines): one line per input in input order,
// an input that cannot be scored (an empty line included) with the failure
// score, a tab and the reason. It returns an error after printing every line
// when any failed.
func scoreArgs(env *task.Env, args []string) error {
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	if len(args) == 0 {
		var err error
		if args, err = inputLines(os.Stdin, "stdin"); err != nil {
			return err
		}
	}
	obj, err := ParseObjective(env.Opts.String(optObjective))
	if err != nil {
		return err
	}
	return scoreLines(env.Stdout, obj, args)
}

// scoreLines writes one line per SMILES of in under obj (see scoreArgs).
func scoreLines(out io.Writer, obj Objective, in []string) error {
	w := bufio.NewWriter(out)
	failed := 0
	for _, s := range in {
		v, err := obj.Score(s)
		fmt.Fprintf(w, "%s\t%s", s, strconv.FormatFloat(v, 'g', -1, 64))
		if err != nil {
			failed++
			fmt.Fprintf(w, "\t%s", strings.Join(strings.Fields(err.Error()), " "))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("score molecule: %d of %d molecules failed (their lines: SMILES, the failure score %g, the reason, tab-separated)",
			failed, len(in), obj.FailureScore())
	}
	return nil
}

// inputLines reads the first field of every line of r, "" for a blank one.
func inputLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		first := ""
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			first = fs[0]
		}
		out = append(out, first)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}
