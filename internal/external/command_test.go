package external

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// badObjects are objects with characters that a shell or a command line
// would change: they must reach the program as they are.
var badObjects = []string{
	"C#C",
	`Cl\C=C/Cl`,
	"C1CC(=O)[NH3+]%10",
	"O=C(O)c1ccccc1[C@@H](N)C(=O)O",
	`it's "quoted"`,
	"two  spaces\tand a tab",
	"$HOME `id` $(id) ; rm -rf / | cat > x &",
	"* ? [a-z] ~ !! %s %d {}",
	"λ → é ü 中文 🙂",
	`\\ \" \n \u0041`,
	"-n",
	"x\ny",
}

// python returns the Python interpreter for the test scripts: Debian's,
// which every test machine has.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("no python3 (Debian's python3 is part of the base system)")
	return ""
}

func scorerArgv(t *testing.T) []string {
	t.Helper()
	abs, err := filepath.Abs("testdata/scorer.py")
	if err != nil {
		t.Fatal(err)
	}
	return []string{python(t), abs}
}

func newScorer(t *testing.T, opts CommandOptions) *Command {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	c, err := NewCommandArgv(scorerArgv(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readLog returns the objects a scorer logged, one JSON string a line.
func readLog(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s string
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		objs = append(objs, s)
	}
	return objs
}

// scoreAll scores objs concurrently and returns the scores and errors in
// order.
func scoreAll(c interface {
	Score(string) (float64, error)
}, objs []string) ([]float64, []error) {
	scores, errs := make([]float64, len(objs)), make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scores[i], errs[i] = c.Score(o)
		}()
	}
	wg.Wait()
	return scores, errs
}

// TestCommandObjectsIntact sends objects full of shell syntax, quotes,
// backslashes and non-ASCII text to a Python program and checks that it
// received each exactly (its log) and that each score came back to its own
// caller (the score is the object's length).
func TestCommandObjectsIntact(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	c := newScorer(t, CommandOptions{Workers: 3, Env: []string{"SCORER_LOG=" + log}, Timeout: 30 * time.Second})
	scores, errs := scoreAll(c, badObjects)
	for i, o := range badObjects {
		if errs[i] != nil || scores[i] != float64(utf8.RuneCountInString(o)) {
			t.Errorf("Score(%q) = %v, %v; want %d", o, scores[i], errs[i], utf8.RuneCountInString(o))
		}
	}
	got := readLog(t, log)
	slices.Sort(got)
	want := slices.Clone(badObjects)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the program received %q, want %q", got, want)
	}
	if s := c.Stats(); s.Starts != 3 || s.Evaluations != int64(len(badObjects)) || s.Failures != 0 {
		t.Errorf("stats %+v: want 3 processes, %d evaluations, no failure", s, len(badObjects))
	}
}

// TestShellObjective runs the shell example examples/per_file.sh around a
// shell program that prints the size of the file it is given: each object
// must arrive in the file byte for byte (its size, plus the final newline).
func TestShellObjective(t *testing.T) {
	wrap, _ := filepath.Abs("../../examples/per_file.sh")
	size, _ := filepath.Abs("testdata/len.sh")
	c, err := NewCommandArgv([]string{wrap, size}, CommandOptions{Workers: 2, Timeout: 30 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	objs := append(slices.Clone(badObjects), "\x01\x1f control")
	scores, errs := scoreAll(c, objs)
	for i, o := range objs {
		if errs[i] != nil || scores[i] != float64(len(o)+1) {
			t.Errorf("Score(%q) = %v, %v; want %d", o, scores[i], errs[i], len(o)+1)
		}
	}
	// A failing program's exit status and standard error make the reason.
	c3, err := NewCommandArgv([]string{wrap, "sh", "-c", `echo "no such \"molecule\"" >&2; exit 4`, "sh"}, CommandOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := c3.Score("C#C"); FailureKind(err) != FailError || !strings.Contains(err.Error(), `exit status 4: no such "molecule"`) {
		t.Errorf("failing program: %v, want an error reply with its status and message", err)
	}
}

func TestCommandFailures(t *testing.T) {
	c := newScorer(t, CommandOptions{Workers: 2, Timeout: 2 * time.Second})
	marker := filepath.Join(t.TempDir(), "crashed")
	for _, x := range []struct {
		obj   string
		score float64
		kind  string
		msg   string
	}{
		{"abc", 3, "", ""},
		{"error:cannot parse C1CC", 0, FailError, "objective: cannot parse C1CC"},
		{"nan", 0, FailNaN, "NaN"},
		{"string", 0, FailNotANumber, `"abc"`},
		{"null", 0, FailNotANumber, "null"},
		{"noise", 5, "", ""},
		{"hang", 0, FailTimeout, "no reply within 2s"},
		{"abcd", 4, "", ""}, // after the timeout's kill, a fresh process
		{"crash", 0, FailCrash, "exit status 3) while evaluating, 3 time(s); its last standard error: scorer: asked to crash"},
		{"crash-once:" + marker, 1, "", ""},
		{"exit-after", 2, "", ""},
		{"ab", 2, "", ""}, // the program exited after its last reply: restarted
	} {
		v, err := c.Score(x.obj)
		switch {
		case x.kind == "" && (err != nil || v != x.score):
			t.Errorf("Score(%q) = %v, %v; want %v", x.obj, v, err, x.score)
		case x.kind != "" && (FailureKind(err) != x.kind || !strings.Contains(err.Error(), x.msg)):
			t.Errorf("Score(%q) = %v, %v; want a %s failure with %q", x.obj, v, err, x.kind, x.msg)
		}
	}
	s := c.Stats()
	// crash: 3 runs (2 retries); crash-once: 1; hang: 1 timeout.
	if s.Crashes != 4 || s.Timeouts != 1 || s.Noise != 3 || s.Failures != 6 {
		t.Errorf("stats %+v: want 4 crashes, 1 timeout, 3 noise lines, 6 failures", s)
	}
}

// TestCommandOutOfOrder starts evaluations that finish in the reverse order
// of their start on 4 processes, and checks that each caller gets its own
// score and that they ran concurrently (they finish in the order of their
// durations).
func TestCommandOutOfOrder(t *testing.T) {
	c := newScorer(t, CommandOptions{Workers: 4, Timeout: 30 * time.Second})
	// Four concurrent calls start the four processes.
	if _, errs := scoreAll(c, []string{"sleep:0.2", "sleep:0.2", "sleep:0.2", "sleep:0.2"}); slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatal(errs)
	}
	objs := []string{"sleep:1.5", "sleep:1.0", "sleep:0.5", "sleep:0.0"}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for _, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Score(o)
			if err != nil || v != float64(len(o)) {
				t.Errorf("Score(%q) = %v, %v; want %d", o, v, err, len(o))
			}
			mu.Lock()
			order = append(order, o)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if want := []string{"sleep:0.0", "sleep:0.5", "sleep:1.0", "sleep:1.5"}; !slices.Equal(order, want) {
		t.Errorf("finished in the order %q, want %q", order, want)
	}
	if s := c.Stats(); s.Starts != 4 {
		t.Errorf("%d processes started, want 4", s.Starts)
	}
	// More callers than processes wait for a free one.
	c1 := newScorer(t, CommandOptions{Workers: 1, Timeout: 30 * time.Second})
	scores, errs := scoreAll(c1, []string{"sleep:0.1", "sleep:0.2", "x"})
	if !slices.Equal(scores, []float64{9, 9, 1}) || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Errorf("one process, 3 callers: %v, %v", scores, errs)
	}
}

// TestCommandWrongID runs a program that says "ready" on start and answers
// each request with a reply to another id first, then with its own id as a
// string: each caller must get the reply to its own id.
func TestCommandWrongID(t *testing.T) {
	prog := `echo ready; while IFS= read -r l; do id=${l#*\"id\":}; id=${id%%,*}; echo "{\"id\": $((id+1)), \"score\": 9}"; echo "{\"id\": \"$id\", \"score\": 1.5}"; done`
	c, err := NewCommandArgv([]string{"sh", "-c", prog}, CommandOptions{Workers: 2, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	scores, errs := scoreAll(c, []string{"a", "b", "c", "d"})
	for i := range scores {
		if errs[i] != nil || scores[i] != 1.5 {
			t.Errorf("evaluation %d: %v, %v; want 1.5", i, scores[i], errs[i])
		}
	}
	if n := c.Stats().Noise; n < 4 {
		t.Errorf("noise %d, want at least the 4 replies to other ids", n)
	}
}

func TestCommandNegateAndStart(t *testing.T) {
	c := newScorer(t, CommandOptions{Negate: true})
	if v, err := c.Score("abc"); err != nil || v != -3 {
		t.Errorf("negated Score = %v, %v; want -3", v, err)
	}
	bad, err := NewCommand("/nonexistent/objective --flag", CommandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Score("C"); FailureKind(err) != FailStart || !strings.Contains(err.Error(), "/nonexistent/objective") {
		t.Errorf("missing program: %v, want a start failure naming it", err)
	}
	if _, err := NewCommand("python3 'x", CommandOptions{}); err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("unterminated quote: %v", err)
	}
}

// TestCommandClose closes a Command with an evaluation in progress and
// processes idle: the evaluation fails at once, no process is left, and
// later calls fail.
func TestCommandClose(t *testing.T) {
	c := newScorer(t, CommandOptions{Workers: 2, StopGrace: time.Second})
	if _, err := c.Score("x"); err != nil {
		t.Fatal(err)
	}
	var pids []int
	done := make(chan error)
	go func() {
		_, err := c.Score("hang")
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	c.mu.Lock()
	for p := range c.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	c.mu.Unlock()
	start := time.Now()
	c.Close()
	if err := <-done; FailureKind(err) != FailClosed {
		t.Errorf("evaluation in progress at Close: %v, want a closed failure", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if len(pids) != 2 {
		t.Errorf("%d processes before Close, want 2", len(pids))
	}
	for _, pid := range pids {
		if err := exec.Command("kill", "-0", fmt.Sprint(pid)).Run(); err == nil {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
	if _, err := c.Score("x"); FailureKind(err) != FailClosed {
		t.Errorf("Score after Close: %v", err)
	}
}
