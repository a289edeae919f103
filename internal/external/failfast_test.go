package external

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFailFastRule: a start failure is a broken program at once; the
// first Max failures, whatever their kinds, are one after the last;
// failures after a success, evaluations given up and failures after the
// rule fired are the objects'; Max 0 stops only on a start failure.
func TestFailFastRule(t *testing.T) {
	crash := fail(FailCrash, "objective: the program exited (exit status 1) while evaluating, 3 time(s); its last standard error: boom")
	timeout := fail(FailTimeout, "objective: no reply within 1s (the program was killed)")
	start := fail(FailStart, "objective: cannot start /no/such/prog: fork/exec /no/such/prog: no such file or directory")

	f := NewFailFast("prog --x", 3)
	for i, err := range []error{crash, fail(FailClosed, "closed"), context.Canceled, timeout} {
		if b := f.Record(err); b != nil {
			t.Fatalf("outcome %d (%v) fired the rule: %v", i, err, b)
		}
	}
	b := f.Record(crash)
	if b == nil || f.Broken() != b {
		t.Fatalf("three failures, a closed and a cancelled evaluation: %v, want the rule fired by the third failure", b)
	}
	for _, want := range []string{"prog --x", "first 3 evaluations", "2 x the program exited (exit status 1)", "boom", "no reply within 1s"} {
		if !strings.Contains(b.Error(), want) {
			t.Errorf("%q does not say %q", b, want)
		}
	}
	if strings.Contains(b.Error(), "objective: ") {
		t.Errorf("%q repeats the reasons' prefix", b)
	}
	if again := f.Record(crash); again != nil {
		t.Errorf("a failure after the rule fired: %v, want the object's failure", again)
	}
	if again := f.Record(start); again != b {
		t.Errorf("a start failure after the rule fired: %v, want the rule's error", again)
	}

	f = NewFailFast("prog", 2)
	f.Record(nil)
	for range 5 {
		if b := f.Record(crash); b != nil {
			t.Fatalf("failures after a success fired the rule: %v", b)
		}
	}
	if b := f.Record(start); b == nil || !strings.Contains(b.Error(), "cannot be started") || !strings.Contains(b.Error(), "/no/such/prog") {
		t.Errorf("a start failure after a success: %v, want the program broken, named", b)
	}

	f = NewFailFast("prog", 0)
	for range 5 {
		if b := f.Record(timeout); b != nil {
			t.Fatalf("Max 0: failures fired the rule: %v", b)
		}
	}
	if b := f.Record(start); b == nil {
		t.Error("Max 0: a start failure did not fire the rule")
	}
}

// brokenAfter evaluates objects with c until the rule fires, at most 10,
// and returns its error and the number of evaluations.
func brokenAfter(t *testing.T, c *Command, max int) (*Broken, int) {
	t.Helper()
	f := NewFailFast(strings.Join(c.Argv(), " "), max)
	for n := 1; n <= 10; n++ {
		_, err := c.Score("CCO")
		if b := f.Record(err); b != nil {
			return b, n
		}
	}
	return nil, 10
}

// TestFailFastPrograms: broken programs as users meet them are found
// broken after the rule's evaluations, and the error names the program,
// the reason and its standard error: a path that does not exist (at the
// first evaluation), a program that reads its request and exits 1 saying
// why on standard error, one that dies before reading anything as a
// Python script whose import fails does, and one that hangs.
func TestFailFastPrograms(t *testing.T) {
	for _, c := range []struct {
		name  string
		argv  []string
		evals int
		want  []string
	}{
		{"missing", []string{"/nonexistent/objective", "--flag"}, 1, []string{"cannot be started", "/nonexistent/objective",
			"no such file or directory"}},
		{"exit 1", []string{"sh", "-c", "read -r line; echo 'scorer: cannot load model.bin' >&2; exit 1"}, 3,
			[]string{"sh -c", "first 3 evaluations", "3 x the program exited (exit status 1)", "cannot load model.bin"}},
		{"import", []string{"sh", "-c", "echo 'Traceback (most recent call last):' >&2; " +
			"echo \"ModuleNotFoundError: No module named 'nonexistent'\" >&2; exit 1"}, 3,
			[]string{"exit status 1", "No module named 'nonexistent'"}},
		{"hang", []string{"sh", "-c", "echo 'waiting for a licence' >&2; sleep 30"}, 3,
			[]string{"no reply within 200ms", "waiting for a licence"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, err := NewCommandArgv(c.argv, CommandOptions{Timeout: 200 * time.Millisecond, StopGrace: time.Second, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer cmd.Close()
			b, n := brokenAfter(t, cmd, 3)
			if b == nil || n != c.evals {
				t.Fatalf("broken %v after %d evaluations, want it after %d", b, n, c.evals)
			}
			for _, w := range c.want {
				if !strings.Contains(b.Error(), w) {
					t.Errorf("%q does not say %q", b, w)
				}
			}
		})
	}
}

// alive reports whether process pid exists and is not a zombie (a killed
// process whose parent, here init, has not reaped it yet).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// waitGone waits up to 10 s for the processes to be gone and reports
// those still alive.
func waitGone(pids ...int) []int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readPid waits up to 10 s for a pid written to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %q", path, b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after 10 s", path)
		}
	}
}

// hangingFamily is a program that writes its pid to $DIR/pid, starts a
// sleep (its child, in its process group) that writes its own to
// $DIR/child, and waits without replying.
const hangingFamily = `read -r line; echo $$ >"$DIR/pid"; sh -c 'echo $$ >"$DIR/child"; exec sleep 300' & wait`

// TestCommandStopKillsGroup: an evaluation given up (its context
// cancelled) and KillGroups kill the program and what it started (its
// process group), not only the program.
func TestCommandStopKillsGroup(t *testing.T) {
	for _, how := range []string{"cancel", "KillGroups"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			c, err := NewCommandArgv([]string{"sh", "-c", hangingFamily}, CommandOptions{Env: []string{"DIR=" + dir}, Retries: -1,
				StopGrace: time.Second, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := c.ScoreContext(ctx, "x")
				done <- err
			}()
			pid, child := readPid(t, filepath.Join(dir, "pid")), readPid(t, filepath.Join(dir, "child"))
			if how == "cancel" {
				cancel()
			} else if n := KillGroups(); n != 1 {
				t.Errorf("KillGroups signalled %d groups, want 1", n)
			}
			err = <-done
			if how == "cancel" && !errors.Is(err, context.Canceled) || how == "KillGroups" && FailureKind(err) != FailCrash {
				t.Errorf("the evaluation: %v, want it given up (cancel) or crashed (KillGroups)", err)
			}
			if left := waitGone(pid, child); len(left) > 0 {
				t.Errorf("processes %v of the program's group still run", left)
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
}

// pdeathEnv names the directory of TestPdeathsigChild's program.
const pdeathEnv = "EXTERNAL_TEST_PDEATH_DIR"

// TestPdeathsigChild evaluates an object with a hanging program until it
// is killed: the process of TestPdeathsig.
func TestPdeathsigChild(t *testing.T) {
	dir := os.Getenv(pdeathEnv)
	if dir == "" {
		t.Skip("child of TestPdeathsig only")
	}
	c, err := NewCommandArgv([]string{"sh", "-c", `read -r line; echo $$ >"$DIR/pid"; exec sleep 300`},
		CommandOptions{Env: []string{"DIR=" + dir}})
	if err != nil {
		t.Fatal(err)
	}
	// Other goroutines come and go on other threads meanwhile.
	for range 8 {
		go func() {
			for {
				time.Sleep(time.Millisecond)
			}
		}()
	}
	c.Score("x")
}

// TestPdeathsig: a program dies with the process that runs it, even when
// that process is killed with SIGKILL and has no chance to stop it.
func TestPdeathsig(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPdeathsigChild$")
	cmd.Env = append(os.Environ(), pdeathEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := readPid(t, filepath.Join(dir, "pid"))
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if left := waitGone(pid); len(left) > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the program (pid %d) outlived the kill -9 of the process running it", pid)
	}
}
