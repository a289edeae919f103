package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// cliChildEnv holds the JSON list of arguments of TestCLIChild.
const cliChildEnv = "TLBO_CLI_CHILD"

// TestCLIChild runs the command line of cliChildEnv in a process of its
// own, as main does: an error is printed and ends the process with its
// exit status.
func TestCLIChild(t *testing.T) {
	spec := os.Getenv(cliChildEnv)
	if spec == "" {
		t.Skip("a child process of other tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(args...); err != nil {
		fmt.Fprintln(os.Stderr, "tlbo-native:", err)
		os.Exit(exitStatus(err))
	}
}

// cliChild returns the command running args in TestCLIChild, its output
// (standard output and error) going to out.
func cliChild(t *testing.T, out *bytes.Buffer, env []string, args ...string) *exec.Cmd {
	t.Helper()
	spec, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIChild$")
	cmd.Env = append(append(os.Environ(), env...), cliChildEnv+"="+string(spec))
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fileLines returns the lines of a file, blanks as _ (none when missing).
func fileLines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

// allDistinct fails the test when a line repeats.
func allDistinct(t *testing.T, what string, lines []string) {
	t.Helper()
	if n := len(slices.Compact(slices.Sorted(slices.Values(lines)))); n != len(lines) {
		t.Errorf("%s: %d lines, %d distinct: an object was evaluated twice (%q)", what, len(lines), n, lines)
	}
}

// countingScorer appends each object to $COUNT and scores its length.
const countingScorer = "cat \"$1\" >>\"$COUNT\"\nwc -c <\"$1\"\n"

// TestProgramBroken: a broken program objective stops the run before it
// spends the budget, with a non-zero exit status and an error naming the
// program, the reason and its standard error; once the program is fixed,
// --resume goes on, and no object is evaluated twice or left out. A
// program that does not exist: the run stops at its first evaluation,
// having journaled nothing. A program that fails as a Python script whose
// import fails (a traceback, exit status 1): the run stops after the
// first 3 evaluations, which stay journaled as failures (not evaluated
// again) and count among the labelled start's calls.
func TestProgramBroken(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	count := filepath.Join(dir, "count.txt")
	t.Setenv("COUNT", count)
	perFile, err := filepath.Abs("../../examples/per_file.sh")
	if err != nil {
		t.Fatal(err)
	}
	scorer := filepath.Join(dir, "score.sh")
	writeScript(t, scorer, countingScorer)
	common := []string{"optimize", "--vae", vae, "--data-dir", data, "--retrain-epochs", "0.2", "--initial-retrain-epochs", "0",
		"--n-best", "30", "--n-rand", "10", "--inducing", "0", "--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2",
		"--budget", "3", "--retrain-every", "3", "--q", "1", "--evaluators", "2", "--seed", "2", "--initial", "5",
		"--failure-score", "7"}

	t.Run("missing", func(t *testing.T) {
		os.Remove(count)
		program := filepath.Join(dir, "objective.sh")
		run := filepath.Join(dir, "missing")
		args := append(slices.Clone(common), "--objective", "command:"+program, "--run-dir", run)
		err := runCLI(args...)
		if err == nil || exitStatus(err) == 0 {
			t.Fatalf("a program that does not exist: %v (exit status %d), want a failure", err, exitStatus(err))
		}
		for _, w := range []string{"cannot be started", program, "no such file or directory", "--resume"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(run, task.StartFile)); len(b) > 0 {
			t.Errorf("the start file holds %q: nothing was evaluated", b)
		}
		writeScript(t, program, "exec sh "+perFile+" sh "+scorer+"\n")
		if err := runCLI(append(args, "--resume")...); err != nil {
			t.Fatalf("--resume once the program exists: %v", err)
		}
		res, err := bo.ReadCurve(run)
		if err != nil {
			t.Fatal(err)
		}
		calls := fileLines(count)
		if len(res.Initial) != 5 || len(calls) != 5+len(res.Evaluations) {
			t.Errorf("the program scored %d objects for %d initial calls and %d evaluations", len(calls), len(res.Initial), len(res.Evaluations))
		}
		allDistinct(t, "the program's calls", calls)
	})

	t.Run("import", func(t *testing.T) {
		os.Remove(count)
		calls := filepath.Join(dir, "calls.txt")
		t.Setenv("CALLS", calls)
		program := filepath.Join(dir, "qed.sh")
		writeScript(t, program, "cat \"$1\" >>\"$CALLS\"\necho 'Traceback (most recent call last):' >&2\n"+
			"echo \"ModuleNotFoundError: No module named 'nonexistent'\" >&2\nexit 1\n")
		run := filepath.Join(dir, "import")
		args := append(slices.Clone(common), "--objective", "command:sh "+perFile+" sh "+program, "--run-dir", run)
		err := runCLI(args...)
		if err == nil || exitStatus(err) == 0 {
			t.Fatalf("a program that always fails: %v (exit status %d), want a failure", err, exitStatus(err))
		}
		for _, w := range []string{program, "first 3 evaluations", "exit status 1", "No module named 'nonexistent'", "--resume", "--fail-fast"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
		// Three failures stop the run; the evaluation running beside the
		// third (2 evaluators) ends, journaled as a failure too.
		failed := fileLines(calls)
		if len(failed) < 3 || len(failed) > 4 {
			t.Errorf("the broken program was asked for %d objects before the run stopped, want 3 (or 4 with the one running)", len(failed))
		}
		writeScript(t, program, "cat \"$1\" >>\"$CALLS\"\n"+countingScorer)
		if err := runCLI(append(args, "--resume")...); err != nil {
			t.Fatalf("--resume once the program is fixed: %v", err)
		}
		res, err := bo.ReadCurve(run)
		if err != nil {
			t.Fatal(err)
		}
		all := fileLines(calls)
		allDistinct(t, "the program's calls", all)
		if len(res.Initial) != 5 || len(all) != 5+len(res.Evaluations) {
			t.Errorf("the program was asked for %d objects for %d initial calls and %d evaluations", len(all), len(res.Initial),
				len(res.Evaluations))
		}
		// The failures before the fix are journaled and were not
		// evaluated again (the calls are distinct); no other failed.
		reasons := failureReasons(t, run)
		n := 0
		for _, r := range reasons {
			if strings.Contains(r, "No module named 'nonexistent'") {
				n++
			}
		}
		if n != len(failed) || len(reasons) != len(failed) {
			t.Errorf("journaled failures %q, want the %d of the broken program", reasons, len(failed))
		}
	})
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// readPidFile returns the pid in path, 0 while there is none.
func readPidFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// TestProgramSignalStop: SIGTERM to a running optimize whose program hangs
// on an evaluation of the loop stops the run: the program's whole process
// group is killed (the script that hangs and the sleep it started, a
// grandchild and a great-grandchild of optimize), the exit status is
// 128 + SIGTERM, and the journal is complete: --resume finishes the run
// with no object evaluated twice or left out.
func TestProgramSignalStop(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	count, calls, hang := filepath.Join(dir, "count.txt"), filepath.Join(dir, "calls.txt"), filepath.Join(dir, "hang")
	pidFile, childFile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
	script := filepath.Join(dir, "hang.sh")
	// While $HANG exists, one call of the loop's first round (after the 5
	// start objects) hangs; mkdir picks one of the round's two.
	writeScript(t, script, "cat \"$1\" >>\""+calls+"\"\n"+
		"if [ -e \""+hang+"\" ] && [ \"$(wc -l <\""+calls+"\")\" -ge 6 ] && mkdir \""+hang+".d\" 2>/dev/null; then\n"+
		"  echo $$ >\""+pidFile+"\"\n"+
		"  sh -c 'echo $$ >\""+childFile+"\"; exec sleep 300' &\n  wait\nfi\n"+countingScorer)
	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	args := programRun(t, data, vae, script, run, "--budget", "4", "--retrain-every", "4", "--q", "2", "--evaluators", "2",
		"--seed", "3", "--initial", "5", "--failure-score", "7")
	var out bytes.Buffer
	child := cliChild(t, &out, []string{"COUNT=" + count}, args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	journal := filepath.Join(run, bo.JournalFile)
	var pid, grandchild int
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(journal)
		pid, grandchild = readPidFile(pidFile), readPidFile(childFile)
		// The round's other evaluation is journaled, the sixth hangs.
		if pid != 0 && grandchild != 0 && bytes.Contains(b, []byte(`{"eval"`)) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("optimize ended (%v) before its program hung:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatalf("the program did not hang within 2 minutes:\n%s", out.String())
		}
	}
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		child.Process.Kill()
		t.Fatalf("optimize still runs a minute after SIGTERM:\n%s", out.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("optimize after SIGTERM: %v, want exit status %d\n%s", err, 128+int(syscall.SIGTERM), out.String())
	}
	if !strings.Contains(out.String(), "stopped by SIGTERM") || !strings.Contains(out.String(), "--resume") {
		t.Errorf("the output does not say the run was stopped by SIGTERM and how to go on:\n%s", out.String())
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid) || alive(grandchild); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("after SIGTERM to optimize, its program's processes still run (script %d: %v, its sleep %d: %v)", pid,
				alive(pid), grandchild, alive(grandchild))
			syscall.Kill(pid, syscall.SIGKILL)
			syscall.Kill(grandchild, syscall.SIGKILL)
			break
		}
	}
	if err := os.Remove(hang); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNT", count)
	if err := runCLI(append(args, "--resume")...); err != nil {
		t.Fatalf("--resume after SIGTERM: %v", err)
	}
	res, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	scored := fileLines(count)
	allDistinct(t, "the objects scored", scored)
	if len(res.Initial) != 5 || len(scored) != 5+len(res.Evaluations) {
		t.Errorf("%d objects scored for %d initial calls and %d evaluations", len(scored), len(res.Initial), len(res.Evaluations))
	}
}

// TestProgramAllFailed: a run whose every evaluation fails (the rule off:
// --fail-fast 0) reports no best score, not the failure score.
func TestProgramAllFailed(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	script := filepath.Join(dir, "fail.sh")
	writeScript(t, script, "echo 'no licence' >&2\nexit 1\n")
	run := filepath.Join(dir, "run")
	var out bytes.Buffer
	child := cliChild(t, &out, nil, programRun(t, data, vae, script, run, "--budget", "2", "--retrain-every", "2", "--q", "1",
		"--seed", "3", "--initial", "3", "--failure-score", "7", "--fail-fast", "0")...)
	if err := child.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if s := out.String(); !strings.Contains(s, "best score: none") || strings.Contains(s, "best score 7") ||
		!strings.Contains(s, "best of the start: none") {
		t.Errorf("every evaluation failed; the summary says:\n%s", s)
	}
}
