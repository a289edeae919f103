package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// runOut runs the command line with args and returns what it wrote.
func runOut(args ...string) (string, error) {
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"tlbo-native"}, args...))
	return out.String(), err
}

// TestHelpDefaults: each flag of the verbs whose defaults depend on the
// task or the verb shows one default, the right one: optimize and train
// per task and for one task, --elbo each verb's own.
func TestHelpDefaults(t *testing.T) {
	var verbs [][]string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			path := append(append([]string(nil), prefix...), c.Name)
			verbs = append(verbs, path)
			walk(path, c.Subcommands)
		}
	}
	walk(nil, newApp().Commands)
	for _, name := range task.Names() {
		verbs = append(verbs, []string{"optimize", "--task", name}, []string{"train", "--task", name})
	}
	for _, args := range verbs {
		out, err := runOut(append(args, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%v --help: two defaults in %q", args, line)
			}
		}
		want := map[string]string{"optimize": `(default: "t")`, "train": `(default: "lbo")`}[args[0]]
		if want != "" && !strings.Contains(out, want) {
			t.Errorf("%v --help lacks --elbo's %s", args, want)
		}
	}
	out, _ := runOut("optimize", "--task", "molecule", "--help")
	if !strings.Contains(out, "(default: 2000, the molecule task's)") || strings.Contains(out, "(default: 0)\n   --n-rand") {
		t.Errorf("optimize --task molecule --help: --n-best's default is not the molecule task's 2000 alone:\n%s", out)
	}
}

// TestTaskOptions: a task's verb offers that task's options for that verb
// only, typed and checked; an option of another task, or of another verb,
// is an error naming it; the README's spellings keep working.
func TestTaskOptions(t *testing.T) {
	help := func(args ...string) string {
		t.Helper()
		out, err := runOut(append(args, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		return out
	}
	has := func(what, text string, flags ...string) {
		t.Helper()
		for _, f := range flags {
			if !strings.Contains(text, f) {
				t.Errorf("%s: help lacks %s:\n%s", what, f, text)
			}
		}
	}
	lacks := func(what, text string, flags ...string) {
		t.Helper()
		for _, f := range flags {
			if strings.Contains(text, f) {
				t.Errorf("%s: help lists %s:\n%s", what, f, text)
			}
		}
	}
	h := help("score", "molecule")
	has("score molecule", h, "--rdkit-log")
	lacks("score molecule", h, "--hidden", "--workers", "--vocab", "--target", "--designs")
	h = help("train", "--task", "molecule")
	has("train --task molecule", h, "--hidden", "--vocab", "--workers", "--molecules", "--epochs", "--elbo")
	lacks("train --task molecule", h, "--target", "--designs", "--candidates")
	h = help("train", "--task", "topology")
	has("train --task topology", h, "--target", "--designs", "--target-seed", "the topology task's")
	lacks("train --task topology", h, "--hidden", "--vocab")
	h = help("train")
	has("train", h, "train --task T --help", "(default: expression 300, molecule 1, topology 300)")
	lacks("train", h, "--hidden", "--vocab", "--target")
	h = help("data", "molecule")
	has("data molecule", h, "--candidates", "-n", "--vocab", "--workers")
	has("optimize --task expression", help("optimize", "--task", "expression"), "--target", "--budget")

	dir := t.TempDir()
	out := filepath.Join(dir, "x.pt")
	for _, tc := range []struct {
		args  []string
		words []string
	}{
		{[]string{"score", "molecule", "--workers", "-3", "CCO"}, []string{"--workers", "task molecule", "not for score"}},
		{[]string{"score", "molecule", "--hidden", "16", "CCO"}, []string{"--hidden", "train"}},
		{[]string{"train", "--task", "molecule", "--workers", "-3", "--out", out}, []string{"--workers -3", "at least 0"}},
		{[]string{"train", "--task", "molecule", "--vocab", "/nonexistent", "--out", out}, []string{"--vocab /nonexistent", "no such file"}},
		{[]string{"train", "--task", "molecule", "--hidden", "0", "--out", out}, []string{"--hidden 0", "at least 1"}},
		{[]string{"train", "--task", "molecule", "--target", "x", "--out", out}, []string{"--target", "task expression", "not of train for task molecule"}},
		{[]string{"train", "--task", "expression", "--hidden", "16", "--out", out}, []string{"--hidden", "task molecule"}},
		{[]string{"train", "--out", out}, []string{"give --task"}},
		{[]string{"train", "--task", "nonesuch", "--out", out}, []string{`unknown task "nonesuch"`}},
		{[]string{"encode", "--in", "x", "--out", "y"}, []string{"--task", "--vae"}},
		{[]string{"data", "molecule", "--out", dir, "--candidates", "true"}, []string{"no arguments", "true", "--name=false"}},
		{[]string{"data", "topology", "--out", dir, "-n", "0"}, []string{"-n 0", "at least 1"}},
		{[]string{"optimize", "--vae", filepath.Join(dir, "none.pt"), "--run-dir", dir}, []string{"--vae", "none.json"}},
	} {
		_, err := runOut(tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", tc.args, err, w)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands left %v", entries)
	}
}

// TestTaskCommands: the tasks' own commands are where the README says.
func TestTaskCommands(t *testing.T) {
	app := newApp()
	find := func(cmds []*cli.Command, path ...string) *cli.Command {
		var c *cli.Command
		for _, name := range path {
			c = nil
			for _, x := range cmds {
				if x.Name == name {
					c = x
				}
			}
			if c == nil {
				return nil
			}
			cmds = c.Subcommands
		}
		return c
	}
	for _, path := range [][]string{{"topology", "solve"}, {"molecule", "tree"}, {"plot", "latent-map"}, {"bench", "jtvae-step"},
		{"bench", "gvae-step"}, {"bench", "vocab-coverage"}, {"bench", "cache-measure"}, {"bench", "sgpr-eval"}, {"bench", "bo-step"}, {"bench", "loop"},
		{"checkpoint", "import"}, {"analyze", "gp-loglik"}, {"data", "molecule"}, {"score", "topology"}, {"encode"}, {"train"}} {
		if find(app.Commands, path...) == nil {
			t.Errorf("no command %s", strings.Join(path, " "))
		}
	}
}

// TestImportBoundaries: the command line reaches the tasks through the
// registry only, and the benchmark helpers know no task or network.
func TestImportBoundaries(t *testing.T) {
	const mod = "github.com/tlbo-native/tlbo-native/"
	check := func(dir string, bad func(string) bool) {
		t.Helper()
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if bad(strings.TrimPrefix(imp, mod)) {
				t.Errorf("%s imports %s", dir, imp)
			}
		}
	}
	check(".", func(p string) bool {
		return strings.HasPrefix(p, "internal/task/") && p != "internal/task/all" || strings.HasPrefix(p, "models/")
	})
	check("../../internal/bench", func(p string) bool {
		return strings.HasPrefix(p, "internal/task") || strings.HasPrefix(p, "models") || p == "torch"
	})
}

// TestExitStatus: a run refused because another process holds its run
// directory exits 75 (EX_TEMPFAIL), however deep the error is wrapped; any
// other failure, a run directory that holds a run included, exits 1.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	lock, err := bo.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	inUse := bo.CheckRunDir(bo.Options{Dir: dir, Resume: true})
	if inUse == nil {
		t.Fatal("CheckRunDir on a locked run directory: no error")
	}
	if got := exitStatus(fmt.Errorf("optimize: %w", inUse)); got != exitInUse {
		t.Errorf("exit status after %q: %d, want %d", inUse, got, exitInUse)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	held := bo.CheckRunDir(bo.Options{Dir: dir})
	for _, err := range []error{held, errors.New("flag provided but not defined: -x")} {
		if err == nil {
			t.Fatal("CheckRunDir on a run directory holding a run, without --resume: no error")
		}
		if got := exitStatus(err); got != 1 {
			t.Errorf("exit status after %q: %d, want 1", err, got)
		}
	}
}

// TestEveryNumericFlagHasARange goes through every command, and every task
// verb for every task: each numeric flag has a range in cliutil's table (a
// task's own integer options have the task's Min instead).
func TestEveryNumericFlagHasARange(t *testing.T) {
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if missing := cliutil.Unranged(c); len(missing) > 0 {
				t.Errorf("%s %s: no range for %v (cliutil's flagRanges)", path, c.Name, missing)
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("tlbo-native", newApp().Commands)
	if len(taskVerbs) == 0 {
		t.Fatal("no task verb registered")
	}
	for _, v := range taskVerbs {
		for _, name := range task.Names() {
			tk, _ := task.Lookup(name)
			walk("tlbo-native (task "+name+")", []*cli.Command{v.build(tk)})
		}
	}
}

// TestFlagRangesOnTheCommandLine: the out-of-range flags are
// refused by the verbs before any work, naming the flag and its range.
func TestFlagRangesOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	vae := filepath.Join(dir, "none.pt")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"optimize", "--task", "expression", "--run-dir", dir, "--threads", "1000"}, "--threads 1000: want 0 to"},
		{[]string{"optimize", "--task", "expression", "--run-dir", dir, "--threads", "-3"}, "--threads -3: want 0 to"},
		{[]string{"optimize", "--task", "expression", "--run-dir", dir, "--top", "-1"}, "--top -1: want at least 0"},
		{[]string{"train", "--task", "expression", "--out", vae, "--latent", "-1"}, "--latent -1: want at least 0"},
		{[]string{"train", "--task", "expression", "--out", vae, "--checkpoint-every", "-1"}, "--checkpoint-every -1: want at least 0"},
		{[]string{"optimize", "--task", "expression", "--run-dir", dir, "--objective", "command:true",
			"--failure-score", "7", "--initial", "3", "--eval-timeout", "-5s"}, "--eval-timeout -5s: want at least 0 (0: none)"},
		{[]string{"gp", "--train-x", vae, "--train-y", vae, "--test-x", vae, "--test-y", vae, "--inducing", "-1"}, "--inducing -1: want at least 0"},
		{[]string{"plot", "latent-map", "--vae", vae, "--out", vae, "-n", "0"}, "--n 0: want at least 1"},
		{[]string{"bench", "bo-step", "--acq", "ucb"}, `--acq "ucb": want ei or logei`},
	} {
		err := runCLI(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
