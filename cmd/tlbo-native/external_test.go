package main

import (
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
	"github.com/tlbo-native/tlbo-native/internal/external/slurmtest"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
)

// TestProgramObjective runs optimize with a program as the objective, as
// docs/objectives.md shows: examples/per_file.sh around a shell script that scores
// an expression by its length and appends it to a file, so that the test
// sees what the program received and how often. The labelled start is 6
// expressions of the data set scored by the program (--initial); every
// object reaches the program once, intact, and a resume with another
// objective is refused. Options that need a program, or that a program
// needs, are refused, named.
func TestProgramObjective(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	count := filepath.Join(dir, "count.txt")
	script := filepath.Join(dir, "count.sh")
	// A constant (no x) fails (exit status 3), the others score their length + 1.
	text := "#!/bin/sh\ncat \"$1\" >>\"$COUNT\"\ngrep -q x \"$1\" || { echo no x >&2; exit 3; }\nwc -c <\"$1\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNT", count)
	perFile, err := filepath.Abs("../../examples/per_file.sh")
	if err != nil {
		t.Fatal(err)
	}
	program := "command:sh " + perFile + " sh " + script
	run := filepath.Join(dir, "run")
	args := []string{"optimize", "--vae", vae, "--data-dir", data, "--budget", "4", "--retrain-every", "4",
		"--retrain-epochs", "0.2", "--initial-retrain-epochs", "0.2", "--n-best", "30", "--n-rand", "10", "--inducing", "0",
		"--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2", "--q", "2", "--evaluators", "2", "--seed", "1",
		"--run-dir", run}
	if err := runCLI(append(args, "--objective", program, "--initial", "6", "--failure-score", "7")...); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(readFile(t, count), "\n"), "\n")
	res, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Initial) != 6 || len(lines) != 6+len(res.Evaluations) {
		t.Fatalf("the program was called %d times for %d initial calls and %d evaluations", len(lines), len(res.Initial), len(res.Evaluations))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("%q evaluated twice", l)
		}
		seen[l] = true
		if c, err := expression.Canonical(l); err != nil || c != l {
			t.Errorf("the program received %q: want an expression in its canonical spaced form (%q, %v)", l, c, err)
		}
	}
	failures := failureReasons(t, run)
	if len(failures) == 0 {
		t.Error("no evaluation failed: want the constants among them to")
	}
	for _, e := range res.OracleCalls() {
		reason, failed := failures[e.Object]
		switch {
		case !strings.Contains(e.Object, "x") && (!failed || e.Score != expression.FailureScore || !strings.Contains(reason, "exit status 3: no x")):
			t.Errorf("%q scored %g (failure %q), want the failure score %g with the program's exit status and stderr", e.Object, e.Score,
				reason, expression.FailureScore)
		case strings.Contains(e.Object, "x") && (failed || e.Score < float64(len(strings.ReplaceAll(e.Object, " ", "")))):
			t.Errorf("%q scored %g (failure %q), want its spaced length + 1", e.Object, e.Score, reason)
		}
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(run, bo.ConfigFile))), &cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, filepath.Join(run, bo.ConfigFile)), strings.TrimPrefix(program, "command:")) {
		t.Errorf("config.json does not record the program: %v", cfg)
	}
	err = runCLI(append(args, "--resume", "--objective", "command:sh "+perFile+" wc -c", "--initial", "6", "--failure-score", "7")...)
	if err == nil || !strings.Contains(err.Error(), "objective") {
		t.Errorf("resume with another program: %v, want an error naming the objective", err)
	}
	// --initial with the task's own objective: the same draw, scored by it.
	builtin := filepath.Join(dir, "builtin")
	b := slices.Clone(args)
	b[len(b)-1] = builtin
	if err := runCLI(append(b, "--initial", "5")...); err != nil {
		t.Fatal(err)
	}
	if c, err := bo.ReadCurve(builtin); err != nil || len(c.Initial) != 5 || c.Initial[0].Object != res.Initial[0].Object {
		t.Errorf("--initial 5 with the built-in objective: %v, %v; want the program's draw's first 5", c.Initial, err)
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--objective", program, "--failure-score", "7"}, "--initial"},
		{[]string{"--objective", program, "--failure-score", "7", "--initial", "3", "--data-scores"}, "give one"},
		{[]string{"--objective", program, "--failure-score", "7", "--initial", "3", "--maximize", "--minimize"}, "--maximize"},
		{[]string{"--objective", program, "--initial", "3"}, "give --failure-score S"},
		{[]string{"--objective", program, "--data-scores"}, "give --failure-score S"},
		{[]string{"--objective", program, "--initial", "3", "--maximize"}, "give --failure-score S"},
		{[]string{"--objective", program, "--failure-score", "worst", "--initial", "3"}, "--failure-score"},
		{[]string{"--objective", program, "--failure-score", "7", "--initial", "3", "--eval-timeout", "soon"}, "--eval-timeout"},
		{[]string{"--objective", program, "--failure-score", "7", "--initial", "3", "--executor", "cloud"}, "--executor"},
		{[]string{"--objective", "qed"}, "--objective"},
		{[]string{"--maximize"}, "--maximize"},
		{[]string{"--executor", "slurm"}, "--executor"},
		{[]string{"--objective", program, "--failure-score", "7", "--data-scores"}, "--data-scores"},
		{[]string{"--failure-score", "7"}, "--failure-score"},
	} {
		a := slices.Clone(args)
		a[len(a)-1] = filepath.Join(t.TempDir(), "r")
		err := runCLI(append(a, c.extra...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.extra, err, c.want)
		}
	}
}

// tinyExpressionVAE returns a data directory of tinyExpressionData, a
// directory for the test's files and a grammar VAE trained on the data for
// one epoch.
func tinyExpressionVAE(t *testing.T) (data, dir, vae string) {
	t.Helper()
	data, dir = tinyExpressionData(t), t.TempDir()
	vae = filepath.Join(dir, "gvae.pt")
	if err := runCLI("train", "--task", "expression", "--data-dir", data, "--epochs", "1", "--batch-size", "64",
		"--prior-samples", "0", "--out", vae); err != nil {
		t.Fatal(err)
	}
	return data, dir, vae
}

// programRun returns the arguments of a small optimize run of the
// expression task in run whose objective is script (a program scoring a
// file) through examples/per_file.sh, then extra.
func programRun(t *testing.T, data, vae, script, run string, extra ...string) []string {
	t.Helper()
	perFile, err := filepath.Abs("../../examples/per_file.sh")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"optimize", "--vae", vae, "--data-dir", data, "--retrain-epochs", "0.2", "--initial-retrain-epochs", "0",
		"--n-best", "30", "--n-rand", "10", "--inducing", "0", "--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2",
		"--objective", "command:sh " + perFile + " sh " + script, "--run-dir", run}, extra...)
}

// TestProgramStartLocked: the run directory is locked before the labelled
// start is scored, not only once the loop begins. While one run's program
// scores its first start object (and waits), a second run on the same
// directory fails at once naming the first's pid, and the program is asked
// for nothing by it; the first run then ends with every object evaluated
// once.
func TestProgramStartLocked(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	count, gate := filepath.Join(dir, "count.txt"), filepath.Join(dir, "go")
	script := filepath.Join(dir, "wait.sh")
	// Appends the object to $COUNT, then waits (at most 10 s) for $GATE.
	text := "#!/bin/sh\ncat \"$1\" >>\"$COUNT\"\ni=0\nwhile [ ! -e \"$GATE\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done\n" +
		"wc -c <\"$1\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNT", count)
	t.Setenv("GATE", gate)
	run := filepath.Join(dir, "run")
	args := programRun(t, data, vae, script, run, "--budget", "2", "--retrain-every", "2", "--q", "1", "--evaluators", "1",
		"--seed", "3", "--initial", "3", "--failure-score", "7")
	first := make(chan error, 1)
	go func() { first <- runCLI(args...) }()
	lines := func() []string {
		b, _ := os.ReadFile(count)
		return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
	}
	for deadline := time.Now().Add(2 * time.Minute); len(lines()) == 0; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-first:
			t.Fatalf("the first run ended (%v) before its program was asked for anything", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run's program was asked for nothing in 2 minutes")
		}
	}
	second := runCLI(args...)
	asked := lines()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("in use by another process (pid %d)", os.Getpid()); second == nil || !strings.Contains(second.Error(), want) {
		t.Errorf("a second run while the first scores its start: %v, want an error with %q", second, want)
	} else if got := exitStatus(second); got != exitInUse {
		t.Errorf("a second run while the first scores its start: exit status %d, want %d", got, exitInUse)
	}
	if len(asked) != 1 {
		t.Errorf("while the first run scored its first start object, the program was asked for %q: want that one object only", asked)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	res, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	all := lines()
	if len(all) != len(res.Initial)+len(res.Evaluations) || len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Errorf("the program was asked for %q: want each of the %d initial calls and %d evaluations once", all, len(res.Initial),
			len(res.Evaluations))
	}
}

// failureReasons returns the failure reason of every failed evaluation of a
// run by object key: the start's (task.StartFile) and the loop's (journal).
func failureReasons(t *testing.T, run string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(run, task.StartFile))), "\n") {
		var r struct{ Object, Failure string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Failure != "" {
			out[r.Object] = r.Failure
		}
	}
	objects := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(run, bo.JournalFile))), "\n") {
		var r struct {
			Round *struct{ Queries []bo.Query }
			Eval  *struct {
				I       int
				Failure string
			}
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Round != nil {
			for _, q := range r.Round.Queries {
				objects[q.Index] = q.Object
			}
		}
		if r.Eval != nil && r.Eval.Failure != "" {
			out[objects[r.Eval.I]] = r.Eval.Failure
		}
	}
	return out
}

// TestProgramObjectiveMolecule: a molecule run with a program objective and
// --initial starts from the molecules the task's own PMO draw picks (the
// same as under a named objective), scored by the program, each molecule
// once.
func TestProgramObjectiveMolecule(t *testing.T) {
	dir := t.TempDir()
	vae := filepath.Join(dir, "jtvae.pt")
	if err := runCLI("train", "--task", "molecule", "--synthetic-data", "--data-dir", dir, "--hidden", "16", "--epochs", "1",
		"--batch-size", "8", "--prior-samples", "0", "--cache-dir", "none", "--out", vae); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "count.txt")
	script := filepath.Join(dir, "count.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat \"$1\" >>\"$COUNT\"\nwc -c <\"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNT", count)
	perFile, err := filepath.Abs("../../examples/per_file.sh")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"optimize", "--vae", vae, "--synthetic-data", "--data-dir", dir, "--cache-dir", "none", "--budget", "2",
		"--retrain-every", "2", "--retrain-epochs", "0.1", "--initial-retrain-epochs", "0", "--n-best", "10", "--n-rand", "0",
		"--inducing", "0", "--raw-samples", "32", "--restarts", "2", "--q", "2", "--initial", "6", "--seed", "2"}
	program, named := filepath.Join(dir, "program"), filepath.Join(dir, "named")
	if err := runCLI(append(args, "--objective", "command:sh "+perFile+" sh "+script, "--failure-score", "0", "--run-dir", program)...); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(args, "--objective", "qed", "--run-dir", named)...); err != nil {
		t.Fatal(err)
	}
	a, errA := bo.ReadCurve(program)
	b, errB := bo.ReadCurve(named)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if len(a.Initial) != 6 || len(b.Initial) != 6 {
		t.Fatalf("initial calls %d and %d, want 6", len(a.Initial), len(b.Initial))
	}
	for i := range a.Initial {
		if a.Initial[i].Object != b.Initial[i].Object || a.Initial[i].Score == b.Initial[i].Score {
			t.Errorf("initial call %d: %v under the program, %v under qed: want the same molecule, scored by each", i, a.Initial[i], b.Initial[i])
		}
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, count)), "\n")
	if len(lines) != 6+len(a.Evaluations) || len(slices.Compact(slices.Sorted(slices.Values(lines)))) != len(lines) {
		t.Errorf("the program was asked %d times (%d distinct) for 6 initial calls and %d evaluations", len(lines),
			len(slices.Compact(slices.Sorted(slices.Values(lines)))), len(a.Evaluations))
	}
}

// killSbatch is a stand-in for sbatch, first on the PATH of
// TestProgramObjectiveSlurmKill's runs: it counts its calls in
// $SBATCH_CALLS and, at the calls $SBATCH_KILL names ("N:before",
// "N:after"), kills its caller, the optimiser, with SIGKILL before
// submitting (the intent journaled, Slurm never asked) or after the real
// sbatch submitted (Slurm has the array, the optimiser never learnt its
// id).
const killSbatch = `#!/bin/sh
n=$(( $(cat "$SBATCH_CALLS" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$SBATCH_CALLS"
case " $SBATCH_KILL " in *" $n:before "*) kill -KILL "$PPID"; exit 1 ;; esac
out=$("$REAL_SBATCH" "$@") || exit $?
case " $SBATCH_KILL " in *" $n:after "*) kill -KILL "$PPID"; exit 1 ;; esac
echo "$out"
`

// TestSlurmKillChild is a run of TestProgramObjectiveSlurmKill in a process
// of its own (to be killed): the optimize arguments are the JSON list in
// TLBO_KILL_CHILD.
func TestSlurmKillChild(t *testing.T) {
	spec := os.Getenv("TLBO_KILL_CHILD")
	if spec == "" {
		t.Skip("a child process of TestProgramObjectiveSlurmKill")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(args...); err != nil {
		t.Fatal(err)
	}
}

// TestProgramObjectiveSlurmKill: a program objective on Slurm, the
// optimiser killed with SIGKILL at the worst moments of a submission, then
// resumed each time: right after sbatch submitted the labelled start's
// array (3 objects on 3 evaluators: one array), between journaling the
// first loop round's array's intent and sbatch, and right after sbatch
// submitted that round's array anew, before its id was journaled. Every
// object reaches the program once, the calls are the run's initial calls
// and distinct evaluations; the journal holds the two intents without an
// id, the first's array marked abandoned (never submitted), the second's
// found by its token.
func TestProgramObjectiveSlurmKill(t *testing.T) {
	slurmtest.Need(t)
	data, dir, vae := tinyExpressionVAE(t)
	real, err := exec.LookPath("sbatch")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(killSbatch), 0o755); err != nil {
		t.Fatal(err)
	}
	count, calls := filepath.Join(dir, "count.txt"), filepath.Join(dir, "sbatch-calls")
	script := filepath.Join(dir, "count.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat \"$1\" >>\"$COUNT\"\nwc -c <\"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	args := programRun(t, data, vae, script, run, "--budget", "4", "--retrain-every", "4", "--q", "2", "--evaluators", "3",
		"--seed", "1", "--initial", "3", "--failure-score", "100", "--executor", "slurm")
	// child runs optimize in a process of its own and reports whether it
	// was killed; any other failure fails the test.
	child := func(args ...string) bool {
		t.Helper()
		spec, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestSlurmKillChild$", "-test.v")
		cmd.Env = append(os.Environ(), "TLBO_KILL_CHILD="+string(spec), "PATH="+bin+":"+os.Getenv("PATH"), "REAL_SBATCH="+real,
			"SBATCH_CALLS="+calls, "SBATCH_KILL=1:after 2:before 3:after", "COUNT="+count)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return true
			}
		}
		if err != nil {
			t.Fatalf("optimize %v: %v\n%s", args, err, out)
		}
		t.Logf("the last run:\n%s", out)
		return false
	}
	resume := append(slices.Clone(args), "--resume")
	for i, a := range [][]string{args, resume, resume} {
		if !child(a...) {
			t.Fatalf("run %d was not killed", i+1)
		}
	}
	if child(resume...) {
		t.Fatal("the last resume was killed")
	}
	res, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Fields(strings.ReplaceAll(readFile(t, count), " ", "_"))
	if len(res.Initial) != 3 || len(all) != len(res.Initial)+len(res.Evaluations) ||
		len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Errorf("the program was asked for %q: want each of the %d initial calls and %d evaluations once", all, len(res.Initial),
			len(res.Evaluations))
	}
	// The intents without an id: the round never submitted, then the same
	// round submitted just before the kill.
	ids := map[string]string{}
	var tokens []string
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(run, bo.JournalFile))), "\n") {
		var r struct{ Job *bo.Job }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Job != nil && r.Job.Token != "" {
			if _, ok := ids[r.Job.Token]; !ok {
				tokens = append(tokens, r.Job.Token)
			}
			ids[r.Job.Token] += r.Job.ID
		}
	}
	var lost []string
	for _, tok := range tokens {
		if ids[tok] == "" {
			lost = append(lost, tok)
		}
	}
	arrayDir := func(token string) string {
		return filepath.Join(run, "slurm", token[:strings.LastIndex(token, "-")])
	}
	if len(lost) != 2 {
		t.Fatalf("journaled intents without an id: %q, want 2 (tokens %q)", lost, tokens)
	}
	if _, err := os.Stat(filepath.Join(arrayDir(lost[0]), "abandoned")); err != nil {
		t.Errorf("the array never submitted (%s) is not marked abandoned: %v", lost[0], err)
	}
	if _, err := os.Stat(filepath.Join(arrayDir(lost[1]), "job_id")); err != nil {
		t.Errorf("the array submitted just before the kill (%s) was not found by its token: %v", lost[1], err)
	}
	t.Logf("sbatch was asked %s times", strings.TrimSpace(readFile(t, calls)))
}

// TestProgramWorkers: --evaluators 2 --q 4 runs at most 2 copies of the
// user's program at once, in the labelled start's scoring as in the loop
// (bo.Config.Workers, the one owner of that number): each copy counts the
// copies running when it starts, and no count may exceed 2.
func TestProgramWorkers(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	running, peak := filepath.Join(dir, "running"), filepath.Join(dir, "peak.txt")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "slow.sh")
	text := "#!/bin/sh\ntouch \"$RUNNING/$$\"\nls \"$RUNNING\" | wc -l >>\"$PEAK\"\nsleep 0.3\nrm -f \"$RUNNING/$$\"\nwc -c <\"$1\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUNNING", running)
	t.Setenv("PEAK", peak)
	run := filepath.Join(dir, "run")
	args := programRun(t, data, vae, script, run, "--budget", "4", "--retrain-every", "4", "--q", "4", "--evaluators", "2",
		"--initial", "8", "--failure-score", "99", "--seed", "3")
	if err := runCLI(args...); err != nil {
		t.Fatal(err)
	}
	counts := strings.Fields(readFile(t, peak))
	if len(counts) < 8 {
		t.Fatalf("the program ran %d times, want at least the 8 of the start", len(counts))
	}
	for i, c := range counts {
		if n, err := strconv.Atoi(c); err != nil || n > 2 {
			t.Errorf("call %d saw %s copies of the program running, want at most --evaluators 2", i+1, c)
		}
	}
}
