package external

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tlbo-native/tlbo-native/internal/external/slurmtest"
)

// waitState waits until squeue lists the array task (jobid_index) in state.
func waitState(t *testing.T, task, state string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command("squeue", "-h", "-r", "-t", "all", "-j", task, "-o", "%T").Output()
		if strings.TrimSpace(string(out)) == state {
			return
		}
	}
	t.Fatalf("%s is not %s after a minute", task, state)
}

func newSlurm(t *testing.T, argv []string, opts SlurmOptions) *Slurm {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(t.TempDir(), "slurm")
	}
	opts.Poll, opts.BatchWindow, opts.ResultGrace = 200*time.Millisecond, 300*time.Millisecond, time.Second
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	s, err := NewSlurmArgv(argv, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSlurmObjects evaluates objects full of shell syntax, quotes and
// non-ASCII text, and failing ones, as one job array on the cluster.
func TestSlurmObjects(t *testing.T) {
	slurmtest.Need(t)
	log := filepath.Join(t.TempDir(), "log")
	var mu sync.Mutex
	var jobs []Job
	s := newSlurm(t, scorerArgv(t), SlurmOptions{Env: []string{"SCORER_LOG=" + log}, Timeout: 5 * time.Minute,
		OnSubmit: func(j Job) { mu.Lock(); jobs = append(jobs, j); mu.Unlock() }})
	bad := []string{"error:cannot parse C1CC", "nan", "crash"}
	objs := append(slices.Clone(badObjects), bad...)
	start := time.Now()
	scores, errs := scoreAll(s, objs)
	t.Logf("%d array tasks in %v", len(objs), time.Since(start))
	for i, o := range badObjects {
		if errs[i] != nil || scores[i] != float64(utf8.RuneCountInString(o)) {
			t.Errorf("Score(%q) = %v, %v; want %d", o, scores[i], errs[i], utf8.RuneCountInString(o))
		}
	}
	n := len(badObjects)
	for i, x := range []struct{ kind, msg string }{
		{FailError, "objective: cannot parse C1CC"},
		{FailNaN, "NaN"},
		{FailCrash, "exited (status 3) without a reply; its last standard error: scorer: asked to crash"},
	} {
		if err := errs[n+i]; FailureKind(err) != x.kind || !strings.Contains(err.Error(), x.msg) {
			t.Errorf("Score(%q) = %v; want a %s failure with %q", objs[n+i], err, x.kind, x.msg)
		}
	}
	got := readLog(t, log)
	slices.Sort(got)
	want := slices.Clone(objs)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the program received %q, want %q", got, want)
	}
	if len(jobs) != 1 || len(jobs[0].Objects) != len(objs) || jobs[0].ID == "" {
		t.Fatalf("submitted %+v, want one array of %d tasks", jobs, len(objs))
	}
	sorted := slices.Clone(jobs[0].Objects)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Errorf("the array's objects %q, want %q", jobs[0].Objects, objs)
	}
	if b, err := os.ReadFile(filepath.Join(jobs[0].Dir, "job_id")); err != nil || strings.TrimSpace(string(b)) != jobs[0].ID {
		t.Errorf("job_id file %q, %v; want %s", b, err, jobs[0].ID)
	}
	if len(s.Jobs()) != 0 {
		t.Errorf("jobs still open: %+v", s.Jobs())
	}
}

// TestSlurmStates checks that an array task that Slurm cancels (running,
// or pending), or whose job script is killed, fails with its Slurm state.
func TestSlurmStates(t *testing.T) {
	slurmtest.Need(t)
	jobs := make(chan Job, 1)
	s := newSlurm(t, scorerArgv(t), SlurmOptions{OnSubmit: func(j Job) { jobs <- j }})
	objs := []string{"hang", "sleep:0.5", "abc"}
	var scores []float64
	var errs []error
	done := make(chan bool)
	go func() {
		scores, errs = scoreAll(s, objs)
		close(done)
	}()
	j := <-jobs
	task := fmt.Sprintf("%s_%d", j.ID, slices.Index(j.Objects, "hang"))
	waitState(t, task, "RUNNING")
	if err := s.Cancel(task); err != nil {
		t.Fatal(err)
	}
	<-done
	if want := "slurm: array task " + task + " CANCELLED"; FailureKind(errs[0]) != FailSlurm || !strings.Contains(errs[0].Error(), want) {
		t.Errorf("cancelled task: %v, want a slurm failure with %q", errs[0], want)
	}
	if errs[1] != nil || scores[1] != 9 || errs[2] != nil || scores[2] != 3 {
		t.Errorf("the array's other tasks: %v, %v", scores[1:], errs[1:])
	}

	// Held (sbatch --hold passed through), one task cancelled while
	// pending, the other released.
	h := newSlurm(t, scorerArgv(t), SlurmOptions{Args: []string{"--hold"}, OnSubmit: func(j Job) { jobs <- j }})
	go func() {
		scores, errs = scoreAll(h, []string{"a", "bb"})
		jobs <- Job{}
	}()
	j = <-jobs
	task = fmt.Sprintf("%s_%d", j.ID, slices.Index(j.Objects, "a"))
	waitState(t, task, "PENDING")
	if err := h.Cancel(task); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("scontrol", "release", j.ID).CombinedOutput(); err != nil {
		t.Fatalf("scontrol release: %v: %s", err, out)
	}
	<-jobs
	if want := "slurm: array task " + task + " left the queue without running"; FailureKind(errs[0]) != FailSlurm || !strings.Contains(errs[0].Error(), want) {
		t.Errorf("task cancelled while pending: %v, want a slurm failure with %q", errs[0], want)
	}
	if errs[1] != nil || scores[1] != 2 {
		t.Errorf("released task: %v, %v; want 2", scores[1], errs[1])
	}

	// The program kills the job script that runs it.
	k := newSlurm(t, []string{"sh", "-c", "kill -KILL $PPID; sleep 2"}, SlurmOptions{})
	if _, err := k.Score("C"); FailureKind(err) != FailSlurm || !strings.Contains(err.Error(), "FAILED") {
		t.Errorf("killed job script: %v, want a slurm failure naming FAILED", err)
	}
}

// TestSlurmAttach submits an array, drops the executor while its tasks run
// (as a killed optimiser would), and re-attaches a new one by job id: each
// object gets its score and is evaluated exactly once. Then, the array
// finished, AttachAll finds it again, also without its job_id file (an
// optimiser killed right after sbatch), and reads the results back.
func TestSlurmAttach(t *testing.T) {
	slurmtest.Need(t)
	dir := filepath.Join(t.TempDir(), "slurm")
	count := filepath.Join(t.TempDir(), "count")
	opts := SlurmOptions{Dir: dir, Env: []string{"SCORER_COUNT=" + count}}
	jobs := make(chan Job, 1)
	opts.OnSubmit = func(j Job) { jobs <- j }
	s1 := newSlurm(t, scorerArgv(t), opts)
	objs := []string{"sleep:2", "ab", "a b c"}
	var wg sync.WaitGroup
	for _, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s1.Score(o); FailureKind(err) != FailClosed {
				t.Errorf("Score(%q) on the closed executor: %v, want a closed failure", o, err)
			}
		}()
	}
	j := <-jobs
	s1.Close()
	wg.Wait()

	opts.OnSubmit = func(j Job) { t.Errorf("submitted %+v again", j) }
	s2 := newSlurm(t, scorerArgv(t), opts)
	got, err := s2.Attach(j.ID)
	if err != nil || got.ID != j.ID || !slices.Equal(got.Objects, j.Objects) {
		t.Fatalf("Attach = %+v, %v; want %+v", got, err, j)
	}
	if _, err := s2.Attach("999999999"); err == nil {
		t.Error("Attach of an unknown job id succeeded")
	}
	scores, errs := scoreAll(s2, objs)
	for i, o := range objs {
		if errs[i] != nil || scores[i] != float64(len(o)) {
			t.Errorf("Score(%q) after Attach = %v, %v; want %d", o, scores[i], errs[i], len(o))
		}
	}
	counted := readLog(t, count)
	slices.Sort(counted)
	want := slices.Clone(objs)
	slices.Sort(want)
	if !slices.Equal(counted, want) {
		t.Errorf("the program evaluated %q, want each of %q once", counted, want)
	}

	if err := os.Remove(filepath.Join(j.Dir, "job_id")); err != nil {
		t.Fatal(err)
	}
	s3 := newSlurm(t, scorerArgv(t), opts)
	all, err := s3.AttachAll()
	if err != nil || len(all) != 1 || all[0].ID != j.ID {
		t.Fatalf("AttachAll = %+v, %v; want the array %s", all, err, j.ID)
	}
	start := time.Now()
	scores, errs = scoreAll(s3, objs)
	for i, o := range objs {
		if errs[i] != nil || scores[i] != float64(len(o)) {
			t.Errorf("Score(%q) after AttachAll = %v, %v; want %d", o, scores[i], errs[i], len(o))
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("reading back finished results took %v", d)
	}
	if n := len(readLog(t, count)); n != len(objs) {
		t.Errorf("%d evaluations in all, want %d", n, len(objs))
	}
	// Taken once: a further call evaluates the object again (a new array).
	s3.opts.OnSubmit = nil
	if v, err := s3.Score("ab"); err != nil || v != 2 {
		t.Errorf("Score again = %v, %v", v, err)
	}
	if n := len(readLog(t, count)); n != len(objs)+1 {
		t.Errorf("%d evaluations in all, want %d", n, len(objs)+1)
	}
	// Submit: Score calls for its objects wait for its tasks.
	sub, err := s3.Submit([]string{"xyz", "q"})
	if err != nil || len(sub.Objects) != 2 {
		t.Fatalf("Submit = %+v, %v", sub, err)
	}
	s3.opts.OnSubmit = func(j Job) { t.Errorf("submitted %+v besides the array of Submit", j) }
	if scores, errs := scoreAll(s3, []string{"q", "xyz"}); errs[0] != nil || errs[1] != nil || scores[0] != 1 || scores[1] != 3 {
		t.Errorf("Score of submitted objects = %v, %v", scores, errs)
	}
	if n := len(readLog(t, count)); n != len(objs)+3 {
		t.Errorf("%d evaluations in all, want %d", n, len(objs)+3)
	}
}

// fakeSbatch writes a stand-in for sbatch (SlurmOptions.Sbatch) that
// simulates what a crash or a lost reply leaves behind. mode "lost-reply"
// submits with the real sbatch, then fails without printing the id (a
// reply that timed out); "hang-after" submits, then hangs (an optimiser
// killed between sbatch and journaling the id: nothing after sbatch runs);
// "hang-before" hangs without submitting (killed between journaling the
// intent and sbatch). It returns the stand-in's path and a function that
// kills a hanging stand-in (called again when the test ends).
func fakeSbatch(t *testing.T, mode string) (string, func()) {
	t.Helper()
	real, err := exec.LookPath("sbatch")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	var body string
	switch mode {
	case "lost-reply":
		body = fmt.Sprintf("%s \"$@\" >/dev/null || exit $?\necho 'sbatch: error: Socket timed out on send/recv operation' >&2\nexit 1\n",
			shellQuote(real))
	case "hang-after":
		body = fmt.Sprintf("%s \"$@\" >/dev/null || exit $?\necho $$ >%s\nexec sleep 600\n", shellQuote(real), shellQuote(pidFile))
	case "hang-before":
		body = fmt.Sprintf("echo $$ >%s\nexec sleep 600\n", shellQuote(pidFile))
	default:
		t.Fatalf("fakeSbatch mode %q", mode)
	}
	path := filepath.Join(dir, "sbatch")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	t.Cleanup(kill)
	return path, kill
}

// lineLog is a Logf that sends its lines to a channel, dropping them when
// it is full.
func lineLog(lines chan string) func(string, ...any) {
	return func(format string, args ...any) {
		select {
		case lines <- fmt.Sprintf(format, args...):
		default:
		}
	}
}

// waitLine waits for a line with want.
func waitLine(t *testing.T, lines chan string, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no log line with %q after a minute", want)
		}
	}
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("no %s after a minute", path)
}

// crashedScore runs Score for objs on s in the background and returns a
// function that closes s (the optimiser's death) and waits for the calls,
// which must fail as closed.
func crashedScore(t *testing.T, s *Slurm, objs []string) func() {
	var wg sync.WaitGroup
	for _, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Score(o); FailureKind(err) != FailClosed {
				t.Errorf("Score(%q) on the crashed executor: %v, want a closed failure", o, err)
			}
		}()
	}
	return func() {
		s.Close()
		wg.Wait()
	}
}

// TestSlurmLostReply: sbatch fails after Slurm took the array (its reply
// lost): the executor finds the array by its token's job name instead of
// submitting the objects again, and each is evaluated once.
func TestSlurmLostReply(t *testing.T) {
	slurmtest.Need(t)
	count := filepath.Join(t.TempDir(), "count")
	var mu sync.Mutex
	var jobs []Job
	sbatch, _ := fakeSbatch(t, "lost-reply")
	s := newSlurm(t, scorerArgv(t), SlurmOptions{Sbatch: sbatch, Env: []string{"SCORER_COUNT=" + count},
		OnSubmit: func(j Job) { mu.Lock(); jobs = append(jobs, j); mu.Unlock() }})
	objs := []string{"a", "bb", "c c"}
	scores, errs := scoreAll(s, objs)
	for i, o := range objs {
		if errs[i] != nil || scores[i] != float64(len(o)) {
			t.Errorf("Score(%q) = %v, %v; want %d", o, scores[i], errs[i], len(o))
		}
	}
	if got := readLog(t, count); len(got) != len(objs) {
		t.Errorf("the program evaluated %q, want each of %q once", got, objs)
	}
	if len(jobs) != 1 || jobs[0].ID == "" || !strings.HasPrefix(jobs[0].Token, "array-0000-") {
		t.Errorf("submitted %+v, want one array with its id and token", jobs)
	}
}

// TestSlurmResumeIntent: the optimiser dies between journaling an array's
// intent (OnIntent: its token) and journaling its id. Killed after sbatch,
// a new executor finds the array by its token (AttachToken), reads its
// results back, and submits nothing: each object is evaluated once. Killed
// before sbatch, AttachToken proves that Slurm never got it
// (ErrNotSubmitted) and marks it abandoned, the objects are submitted anew
// and evaluated once, and the abandoned array, submitted late after all
// (an sbatch orphaned by the kill), evaluates nothing.
func TestSlurmResumeIntent(t *testing.T) {
	slurmtest.Need(t)
	dir := filepath.Join(t.TempDir(), "slurm")
	count := filepath.Join(t.TempDir(), "count")
	intents := make(chan Job, 4)
	opts := SlurmOptions{Dir: dir, Env: []string{"SCORER_COUNT=" + count}, OnSubmit: func(Job) {},
		OnIntent: func(j Job) error {
			select {
			case intents <- j:
			default:
			}
			return nil
		}}
	// The crashed executors' goroutines go on once their stand-in is
	// killed; the test waits for their last line.
	crashLog := make(chan string, 100)

	// Killed after sbatch.
	var kill func()
	opts.Sbatch, kill = fakeSbatch(t, "hang-after")
	opts.Logf = lineLog(crashLog)
	s1 := newSlurm(t, scorerArgv(t), opts)
	objs := []string{"sleep:1", "ab", "a b c"}
	crash := crashedScore(t, s1, objs)
	intent := <-intents
	if intent.ID != "" || intent.Token == "" || len(intent.Objects) != len(objs) {
		t.Fatalf("intent %+v: want a token and the objects, no id", intent)
	}
	waitFile(t, filepath.Join(filepath.Dir(opts.Sbatch), "pid")) // sbatch has submitted
	crash()
	if _, err := os.Stat(filepath.Join(intent.Dir, "job_id")); err == nil {
		t.Fatal("the crashed executor wrote the job id: want it killed before")
	}
	opts.Sbatch, opts.Logf = "", nil
	opts.OnSubmit = func(j Job) { t.Errorf("submitted %+v again", j) }
	s2 := newSlurm(t, scorerArgv(t), opts)
	j, err := s2.AttachToken(intent.Token, "")
	if err != nil || j.ID == "" || j.Token != intent.Token || !slices.Equal(j.Objects, intent.Objects) {
		t.Fatalf("AttachToken = %+v, %v; want the array of %+v with its id", j, err, intent)
	}
	if id, err := readJobID(intent.Dir); err != nil || id != j.ID {
		t.Errorf("job_id %q, %v; want %s recorded", id, err, j.ID)
	}
	scores, errs := scoreAll(s2, objs)
	for i, o := range objs {
		if want := float64(utf8.RuneCountInString(o)); errs[i] != nil || scores[i] != want {
			t.Errorf("Score(%q) after AttachToken = %v, %v; want %v", o, scores[i], errs[i], want)
		}
	}
	if got := readLog(t, count); len(got) != len(objs) {
		t.Errorf("the program evaluated %q, want each of %q once", got, objs)
	}
	kill()
	waitLine(t, crashLog, "submitted job array "+j.ID)

	// Killed before sbatch.
	opts.Sbatch, kill = fakeSbatch(t, "hang-before")
	opts.OnSubmit, opts.Logf = func(Job) {}, lineLog(crashLog)
	s3 := newSlurm(t, scorerArgv(t), opts)
	more := []string{"xyz", "q"}
	crash = crashedScore(t, s3, more)
	intent = <-intents
	waitFile(t, filepath.Join(filepath.Dir(opts.Sbatch), "pid"))
	crash()
	opts.Sbatch, opts.Logf = "", nil
	var submitted []Job
	opts.OnSubmit = func(j Job) { submitted = append(submitted, j) }
	s4 := newSlurm(t, scorerArgv(t), opts)
	if j, err := s4.AttachToken(intent.Token, ""); !errors.Is(err, ErrNotSubmitted) {
		t.Fatalf("AttachToken of an array never submitted = %+v, %v; want ErrNotSubmitted", j, err)
	}
	if _, err := os.Stat(filepath.Join(intent.Dir, abandonedFile)); err != nil {
		t.Errorf("the array never submitted is not marked abandoned: %v", err)
	}
	scores, errs = scoreAll(s4, more)
	for i, o := range more {
		if errs[i] != nil || scores[i] != float64(len(o)) {
			t.Errorf("Score(%q) after ErrNotSubmitted = %v, %v; want %d", o, scores[i], errs[i], len(o))
		}
	}
	if len(submitted) != 1 || submitted[0].Dir == intent.Dir {
		t.Errorf("submitted %+v, want the objects in one new array", submitted)
	}
	if got := readLog(t, count); len(got) != len(objs)+len(more) {
		t.Errorf("the program evaluated %q, want each of %q and %q once", got, objs, more)
	}
	out, err := exec.Command("sbatch", "--wait", "--parsable", "--array=0-1", "--output=/dev/null",
		filepath.Join(intent.Dir, "job.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch of the abandoned array: %v: %s", err, out)
	}
	if got := readLog(t, count); len(got) != len(objs)+len(more) {
		t.Errorf("the abandoned array, run late, evaluated %q", got[len(objs)+len(more):])
	}
	if hasEntries(filepath.Join(intent.Dir, "results")) {
		t.Error("the abandoned array, run late, wrote results")
	}
	kill()
	waitLine(t, crashLog, "trying again")
}

// TestSlurmTagged: a tagged evaluation gets the result of the array task
// submitted for its tag and no other. After a restart (an executor closed
// with its array running, then a new one attached by token), the tag in
// flight gets its array's result without a new submission, while a
// repeat of the same object under another tag, or untagged, is evaluated
// anew (a stochastic objective's replicate), and a finished array whose
// result was already taken is attached without feeding anyone.
func TestSlurmTagged(t *testing.T) {
	slurmtest.Need(t)
	dir := filepath.Join(t.TempDir(), "slurm")
	count := filepath.Join(t.TempDir(), "count")
	opts := SlurmOptions{Dir: dir, Env: []string{"SCORER_COUNT=" + count}}
	var mu sync.Mutex
	var tokens []string
	opts.OnSubmit = func(j Job) { mu.Lock(); tokens = append(tokens, j.Token); mu.Unlock() }
	s1 := newSlurm(t, scorerArgv(t), opts)
	if v, err := s1.ScoreTagged(t.Context(), "query-0", "sleep:1"); err != nil || v != 7 {
		t.Fatalf("query-0 = %v, %v", v, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s1.ScoreTagged(t.Context(), "query-1", "sleep:1")
		done <- err
	}()
	for len(s1.Jobs()) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	s1.Close() // the run stops with query-1's array submitted
	if err := <-done; FailureKind(err) != FailClosed {
		t.Fatalf("query-1 on the closed executor: %v", err)
	}
	if n := len(readLog(t, count)); n > 2 {
		t.Fatalf("%d calls before the restart", n)
	}

	s2 := newSlurm(t, scorerArgv(t), opts)
	mu.Lock()
	for _, tok := range tokens {
		if _, err := s2.AttachToken(tok, ""); err != nil {
			t.Fatal(err)
		}
	}
	mu.Unlock()
	if v, err := s2.ScoreTagged(t.Context(), "query-1", "sleep:1"); err != nil || v != 7 {
		t.Errorf("query-1 after the restart = %v, %v", v, err)
	}
	if n := len(readLog(t, count)); n != 2 {
		t.Errorf("%d calls after query-1 was resumed, want 2 (its array's result read back)", n)
	}
	for _, tag := range []string{"query-2", ""} {
		if v, err := s2.ScoreTagged(t.Context(), tag, "sleep:1"); err != nil || v != 7 {
			t.Errorf("tag %q = %v, %v", tag, v, err)
		}
	}
	if got := readLog(t, count); len(got) != 4 {
		t.Errorf("the program was called for %q: want query-2 and the untagged repeat evaluated anew, not given "+
			"query-0's or query-1's result", got)
	}
	// A tag attached with another object is evaluated anew.
	if v, err := s2.ScoreTagged(t.Context(), "query-0", "ab"); err != nil || v != 2 {
		t.Errorf("query-0 with another object = %v, %v", v, err)
	}
	if n := len(readLog(t, count)); n != 5 {
		t.Errorf("%d calls, want 5", n)
	}
	// An array written before tags (no tags file) is matched by object,
	// as it was.
	s3 := newSlurm(t, scorerArgv(t), opts)
	old, err := s3.AttachToken(tokens[0], "")
	if err != nil {
		t.Fatal(err)
	}
	s3.Close()
	if err := os.Remove(filepath.Join(old.Dir, tagsFile)); err != nil {
		t.Fatal(err)
	}
	s4 := newSlurm(t, scorerArgv(t), opts)
	if _, err := s4.AttachToken(tokens[0], ""); err != nil {
		t.Fatal(err)
	}
	if v, err := s4.ScoreTagged(t.Context(), "query-7", "sleep:1"); err != nil || v != 7 {
		t.Errorf("query-7 over an array without tags = %v, %v", v, err)
	}
	if n := len(readLog(t, count)); n != 5 {
		t.Errorf("%d calls, want 5 (the result of the array without tags read back)", n)
	}
}
