package bo_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// checkNoRepeat fails when an object was evaluated twice or evaluated
// although it is in the labelled data, and returns the number of known
// (skipped) repeats.
func checkNoRepeat(t *testing.T, res *bo.Result, task bo.Task[[]float64], data bo.Data[[]float64]) int {
	t.Helper()
	inData := map[string]bool{}
	for _, o := range data.Objects {
		inData[task.Key(o)] = true
	}
	evaluated := map[string]int{}
	known := 0
	for _, q := range res.Queries {
		switch {
		case q.Known:
			known++
			if !inData[q.Object] && evaluated[q.Object] == 0 {
				t.Errorf("query %d: object %s marked known but never scored before", q.Index, q.Object)
			}
		case q.Valid:
			if inData[q.Object] {
				t.Errorf("query %d: evaluated %s, which is in the labelled data", q.Index, q.Object)
			}
			if evaluated[q.Object]++; evaluated[q.Object] > 1 {
				t.Errorf("query %d: evaluated %s again", q.Index, q.Object)
			}
		}
	}
	if len(evaluated) != res.Evaluated {
		t.Errorf("%d distinct objects evaluated, the run counts %d", len(evaluated), res.Evaluated)
	}
	return known
}

// TestNoRepeatsCollapsedDecoder: a decoder that maps most latent points
// onto a few grid objects makes the acquisition return to known objects
// again and again; none is evaluated twice, each known one is journaled
// with its known score, and the run either spends its budget on distinct
// objects or ends saying that nothing novel is within reach.
func TestNoRepeatsCollapsedDecoder(t *testing.T) {
	p, data := newToy(t)
	for _, grid := range []float64{0.25, 1} {
		t.Run(fmt.Sprint(grid), func(t *testing.T) {
			m := p.Model()
			m.Grid = grid
			cfg := toyConfig()
			cfg.Budget, cfg.SamplesPerModel = 20, 0
			res, err := bo.Run[[]float64](cfg, p.Task(), m, data, bo.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			known := checkNoRepeat(t, res, p.Task(), data)
			fallbacks := 0
			for _, q := range res.Queries {
				if q.Fallback != "" {
					fallbacks++
				}
			}
			t.Logf("grid %v: %d evaluations, %d known, %d fallbacks, exhausted %q", grid, res.Evaluated, known, fallbacks, res.Exhausted)
			if known == 0 {
				t.Error("no known object was proposed; the test checks nothing")
			}
			if res.Evaluated != cfg.Budget && res.Exhausted == "" {
				t.Errorf("%d evaluations of a budget of %d without saying why", res.Evaluated, cfg.Budget)
			}
		})
	}
}

// TestSkipNothingNovel: every latent point decodes to the same data object;
// the run ends at once with a reason, evaluates nothing and does not spin.
func TestSkipNothingNovel(t *testing.T) {
	start := time.Now()
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 5, 0
	res, err := bo.Run[float64](cfg, coarseTask{}, constModel{}, coarseData(), bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluated != 0 || !strings.Contains(res.Exhausted, "no novel object") {
		t.Fatalf("%d evaluations, exhausted %q; want none and a reason", res.Evaluated, res.Exhausted)
	}
	if len(res.Queries) != 0 {
		t.Errorf("%d queries journaled, want none (the round found nothing to evaluate)", len(res.Queries))
	}
	t.Logf("ended after %v: %s", time.Since(start), res.Exhausted)
}

// constModel decodes every point to 3, an object of the data.
type constModel struct{ coarseModel }

func (constModel) Decode(z *mat.Dense, _ uint64) ([]float64, []bool, error) {
	n, _ := z.Dims()
	objs, ok := make([]float64, n), make([]bool, n)
	for i := range objs {
		objs[i], ok[i] = 3, true
	}
	return objs, ok, nil
}

// TestRandomSearchNothingNovel: random search on a decoder whose every
// object is known ends with a reason instead of evaluating a duplicate.
func TestRandomSearchNothingNovel(t *testing.T) {
	cfg := toyConfig()
	cfg.Strategy, cfg.Budget, cfg.SamplesPerModel = bo.StrategyRandom, 10, 0
	res, err := bo.Run[float64](cfg, coarseTask{}, coarseModel{}, coarseData(), bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, q := range res.Queries {
		if q.Duplicate || q.Known || seen[q.Object] {
			t.Errorf("query %d evaluated %s again", q.Index, q.Object)
		}
		seen[q.Object] = true
	}
	// The data hold 0..17 of the objects 0..20.
	if res.Evaluated != 3 || res.Exhausted == "" {
		t.Errorf("%d evaluations, exhausted %q; want the 3 novel objects, then an end with a reason", res.Evaluated, res.Exhausted)
	}
}

// TestRoundsOfQ: q proposals per round are distinct novel objects, the GP
// is fitted once per round, and the run is deterministic.
func TestRoundsOfQ(t *testing.T) {
	p, data := newToy(t)
	cfg := toyConfig()
	cfg.Q = 4
	run := func() *bo.Result {
		res, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	checkNoRepeat(t, res, p.Task(), data)
	if res.Evaluated != cfg.Budget {
		t.Fatalf("%d evaluations, want %d", res.Evaluated, cfg.Budget)
	}
	perRound := map[int]int{}
	for _, q := range res.Queries {
		if q.Valid && !q.Known {
			perRound[q.Round]++
		}
		if (q.GP != nil) != (q.Index == q.Round) {
			t.Errorf("query %d of round %d: GP record %v; want one on each round's first query", q.Index, q.Round, q.GP != nil)
		}
	}
	// 10 queries a version: rounds of 4, 4, 2.
	sizes := map[int]int{}
	for _, n := range perRound {
		sizes[n]++
	}
	if sizes[4] != 6 || sizes[2] != 3 || len(sizes) != 2 {
		t.Errorf("round sizes %v, want six rounds of 4 and three of 2", sizes)
	}
	sameQueries(t, run().Queries, res.Queries)
}

// TestTrustRegionRun: the journal records the trust region per round, its
// length follows the TuRBO schedule on the round's results, and a resumed
// run equals an uninterrupted one.
func TestTrustRegionRun(t *testing.T) {
	p, data := newToy(t)
	cfg := toyConfig()
	cfg.Q, cfg.TrustRegion = 2, true
	cfg.TR.Successes, cfg.TR.Failures = 2, 2
	dir := t.TempDir()
	res, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rounds := readRounds(t, dir)
	if len(rounds) == 0 || rounds[0].TR == nil || rounds[0].TR.Length != cfg.TR.Init {
		t.Fatalf("first round's trust region %+v, want length %v", rounds[0].TR, cfg.TR.Init)
	}
	best := minScore(data.Scores)
	lengths := map[float64]bool{}
	for k := 0; k+1 < len(rounds); k++ {
		rd, next := rounds[k], rounds[k+1]
		improved := false
		for _, q := range res.Queries[rd.Start:next.Start] {
			if q.Valid && !q.Known && q.Score < best-1e-3*abs(best) {
				improved = true
			}
		}
		for _, q := range res.Queries[rd.Start:next.Start] {
			if q.Valid && q.Score < best {
				best = q.Score
			}
		}
		want := expectTR(*rd.TR, cfg.TR, improved)
		if *next.TR != want {
			t.Errorf("round %d: trust region %+v after %+v (improved %v), want %+v", next.Start, *next.TR, *rd.TR, improved, want)
		}
		lengths[next.TR.Length] = true
	}
	if len(lengths) < 2 {
		t.Errorf("trust region lengths %v: the schedule never changed it; the test checks little", lengths)
	}
	checkNoRepeat(t, res, p.Task(), data)
}

// expectTR is the TuRBO schedule written out for the test (d = 3, q = 2).
func expectTR(s bo.TrustRegion, c bo.TrustRegionConfig, success bool) bo.TrustRegion {
	if success {
		s.Successes++
		s.Failures = 0
	} else {
		s.Failures++
		s.Successes = 0
	}
	if s.Successes == c.Successes {
		s.Length, s.Successes = min(2*s.Length, c.Max), 0
	} else if s.Failures == c.Failures {
		s.Length, s.Failures = s.Length/2, 0
	}
	if s.Length < c.Min {
		s.Length, s.Successes, s.Failures, s.Restarts = c.Init, 0, 0, s.Restarts+1
	}
	return s
}

func abs(x float64) float64 { return max(x, -x) }

func minScore(s []float64) float64 {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

// readRounds returns the round records of a run's journal.
func readRounds(t *testing.T, dir string) []bo.Round {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []bo.Round
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var rec struct{ Round *bo.Round }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Round != nil {
			out = append(out, *rec.Round)
		}
	}
	return out
}

// countingTask appends the key of every finished evaluation to a file; the
// evaluation number block (from 1), when set, never finishes, so that a
// parent can kill the process in the middle of a round.
type countingTask struct {
	botest.Task
	path  string
	block int64
	calls *atomic.Int64
	mu    *sync.Mutex
}

func (c countingTask) Score(x []float64) (float64, error) {
	if n := c.calls.Add(1); n == c.block {
		select {} // killed here
	}
	time.Sleep(5 * time.Millisecond)
	s, err := c.Task.Score(x)
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ferr := os.OpenFile(c.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr != nil {
		return s, ferr
	}
	defer f.Close()
	fmt.Fprintln(f, c.Task.Key(x))
	return s, err
}

func newCountingTask(p *botest.Problem, path string, block int64) countingTask {
	return countingTask{Task: p.Task(), path: path, block: block, calls: new(atomic.Int64), mu: new(sync.Mutex)}
}

func qConfig() bo.Config {
	cfg := toyConfig()
	cfg.Q, cfg.SamplesPerModel = 4, 0
	return cfg
}

const roundChildEnv = "BO_TEST_ROUND_CHILD_DIR"

// TestRoundKillChild is the child process of TestKillInsideRound.
func TestRoundKillChild(t *testing.T) {
	dir := os.Getenv(roundChildEnv)
	if dir == "" {
		t.Skip("child of TestKillInsideRound only")
	}
	p, data := newToy(t)
	task := newCountingTask(p, filepath.Join(dir, "evaluated.txt"), 14)
	if _, err := bo.Run[[]float64](qConfig(), task, p.Model(), data, bo.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
}

// lines returns the lines of a file (none when it is missing).
func lines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// TestKillInsideRound kills a run with q = 4 while one evaluation of its
// fourth round hangs and the round's others are journaled; the resumed run
// evaluates only the unfinished one and then equals an uninterrupted run,
// and every object is evaluated exactly once.
func TestKillInsideRound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	p, data := newToy(t)
	ref, err := bo.Run[[]float64](qConfig(), p.Task(), p.Model(), data, bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counter := filepath.Join(dir, "evaluated.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRoundKillChild$")
	cmd.Env = append(os.Environ(), roundChildEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	// Rounds of 4, 4 and 2 make a version of 10: evaluations 11-14 are the
	// fourth round, and the 14th hangs. Wait until the other 13 finished
	// and are journaled.
	for len(lines(counter)) < 13 || journalCount(dir, `"eval"`) < 13 {
		select {
		case err := <-done:
			t.Fatalf("the child ended by itself (%v) after %d evaluations", err, len(lines(counter)))
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("the child did not reach 13 evaluations in 60 s (%d)", len(lines(counter)))
		case <-time.After(2 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := <-done; !errors.As(err, &exit) {
		t.Fatalf("the child ended by itself (%v)", err)
	}
	task := newCountingTask(p, counter, 0)
	got, err := bo.Run[[]float64](qConfig(), task, p.Model(), data, bo.Options{Dir: dir, Resume: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if want := fourthRound(ref.Queries); got.Resumed != want {
		t.Errorf("resumed %d queries, want the %d of the three complete rounds", got.Resumed, want)
	}
	sameQueries(t, got.Queries, ref.Queries)
	evaluated := lines(counter)
	count := map[string]int{}
	for _, k := range evaluated {
		if count[k]++; count[k] > 1 {
			t.Errorf("%s evaluated %d times", k, count[k])
		}
	}
	if len(evaluated) != ref.Evaluated {
		t.Errorf("%d evaluations in all, want %d", len(evaluated), ref.Evaluated)
	}
	if calls := task.calls.Load(); calls != int64(ref.Evaluated-13) {
		t.Errorf("the resumed run evaluated %d objects, want %d", calls, ref.Evaluated-13)
	}
}

// fourthRound returns the index of the fourth round's first query.
func fourthRound(qs []bo.Query) int {
	starts := 0
	for _, q := range qs {
		if q.Index == q.Round {
			if starts++; starts == 4 {
				return q.Index
			}
		}
	}
	return -1
}

// journalCount counts the journal lines holding s.
func journalCount(dir, s string) int {
	b, err := os.ReadFile(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "{"+s) {
			n++
		}
	}
	return n
}

// TestRunDirectoryLocked: a second run on a directory in use fails at once,
// naming the holder's pid, and the directory is usable again afterwards.
func TestRunDirectoryLocked(t *testing.T) {
	p, data := newToy(t)
	dir := t.TempDir()
	entered := make(chan struct{})
	release := make(chan struct{})
	blocking := blockingTask{Task: p.Task(), entered: entered, release: release}
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 2, 0
	done := make(chan error, 1)
	go func() {
		_, err := bo.Run[[]float64](cfg, blocking, p.Model(), data, bo.Options{Dir: dir})
		done <- err
	}()
	<-entered
	_, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("second run on a busy directory: %v, want an error naming pid %d", err, os.Getpid())
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir, Resume: true}); err != nil {
		t.Errorf("resume after the first run ended: %v", err)
	}
}

// blockingTask waits in its first evaluation until released.
type blockingTask struct {
	botest.Task
	entered, release chan struct{}
}

func (b blockingTask) Score(x []float64) (float64, error) {
	select {
	case <-b.release:
	default:
		select {
		case b.entered <- struct{}{}:
		default:
		}
		<-b.release
	}
	return b.Task.Score(x)
}

// sleepTask sleeps a time drawn from the object's key (0-20 ms) before
// scoring, so that evaluations finish out of order.
type sleepTask struct{ botest.Task }

func (s sleepTask) Score(x []float64) (float64, error) {
	h := 0
	for _, c := range s.Task.Key(x) {
		h = (h*31 + int(c)) % 1000
	}
	time.Sleep(time.Duration(h%21) * time.Millisecond)
	return s.Task.Score(x)
}

// slowFirstTask holds the evaluation of query 0 until `others` other
// evaluations have started (or, should they never start, for
// slowFirstTimeout), so that it comes back after evaluations proposed later.
type slowFirstTask struct {
	botest.Task
	others  int64
	started *atomic.Int64
	release chan struct{}
	once    *sync.Once
}

// slowFirstTimeout only keeps a loop that waits for query 0 before
// proposing again (one that ignored Async) from waiting forever.
const slowFirstTimeout = 20 * time.Second

func newSlowFirstTask(t botest.Task, others int) slowFirstTask {
	return slowFirstTask{Task: t, others: int64(others), started: new(atomic.Int64), release: make(chan struct{}),
		once: new(sync.Once)}
}

func (s slowFirstTask) ScoreTagged(tag string, x []float64) (float64, error) {
	if tag == bo.QueryTag(0) {
		select {
		case <-s.release:
		case <-time.After(slowFirstTimeout):
		}
	} else if s.started.Add(1) == s.others {
		s.once.Do(func() { close(s.release) })
	}
	return s.Task.Score(x)
}

// TestAsyncRounds: under the asynchronous policy with 4 workers the run
// spends its budget on distinct objects, rounds are proposed while an
// earlier round's evaluation is still running, and a run cut anywhere in
// its journal (rounds still running) resumes with the cut's queries
// unchanged, no object evaluated twice and the budget spent.
//
// Query 0's evaluation is held until 7 others have started. A round is
// proposed only while fewer than 4 evaluations run, so the round that
// launched the 8th evaluation saw at least 4 evaluations journaled, all
// before query 0's, at most 3 of them from its round: the journal must
// show a later round, and an evaluation of one, before query 0's result.
// A loop that ignored Async would wait for query 0 before proposing again.
func TestAsyncRounds(t *testing.T) {
	p, data := newToy(t)
	cfg := toyConfig()
	cfg.Q, cfg.Evaluators, cfg.Async, cfg.SamplesPerModel = 4, 4, true, 0
	dir := t.TempDir()
	res, err := bo.Run[[]float64](cfg, newSlowFirstTask(p.Task(), 7), p.Model(), data, bo.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkNoRepeat(t, res, p.Task(), data)
	if res.Evaluated != cfg.Budget {
		t.Fatalf("%d evaluations, want %d", res.Evaluated, cfg.Budget)
	}
	u, err := bo.ReadUtilisation(dir, 4)
	if err != nil || u.Evaluations != cfg.Budget || !(u.Fraction > 0 && u.Fraction <= 1.05) {
		t.Errorf("utilisation %+v (%v), want %d timed evaluations and a fraction in (0, 1]", u, err, cfg.Budget)
	}
	b, err := os.ReadFile(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(string(b), "\n")
	checkOverlap(t, all)
	task := sleepTask{p.Task()}
	for _, cut := range []int{len(all) / 3, len(all) / 2} {
		cdir := t.TempDir()
		copyRun(t, dir, cdir, strings.Join(all[:cut], ""))
		got, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: cdir, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		checkNoRepeat(t, got, p.Task(), data)
		if got.Evaluated != cfg.Budget || got.Resumed == 0 {
			t.Errorf("cut at line %d: %d evaluations, %d queries resumed", cut, got.Evaluated, got.Resumed)
		}
		sameQueries(t, got.Queries[:got.Resumed], res.Queries[:got.Resumed])
	}
}

// checkOverlap checks that the journal's lines show rounds proposed while
// query 0 was being evaluated: a round after query 0's, and an evaluation
// of a later round, before query 0's evaluation record.
func checkOverlap(t *testing.T, lines []string) {
	t.Helper()
	firstEnd, later, laterEvals := -1, 0, 0
	for _, line := range lines {
		var rec struct {
			Round *bo.Round `json:"round"`
			Eval  *bo.Eval  `json:"eval"`
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Round != nil && firstEnd < 0:
			firstEnd = rec.Round.Start + len(rec.Round.Queries)
			if !slices.Contains(rec.Round.Pending, 0) {
				t.Fatalf("query 0 is not evaluated (round %+v): choose another query to hold", rec.Round)
			}
		case rec.Round != nil:
			later++
		case rec.Eval != nil && rec.Eval.Index == 0:
			if later == 0 || laterEvals == 0 {
				t.Errorf("%d rounds proposed and %d of their evaluations journaled before query 0's: want both > 0 "+
					"(the loop waited for query 0's evaluation)", later, laterEvals)
				return
			}
			t.Logf("%d rounds proposed and %d of their evaluations journaled while query 0 was evaluated", later, laterEvals)
			return
		case rec.Eval != nil && rec.Eval.Index >= firstEnd:
			laterEvals++
		}
	}
	t.Error("no evaluation of query 0 in the journal")
}

// copyRun copies a run directory's configuration and model versions into
// dst with the given journal.
func copyRun(t *testing.T, src, dst, journal string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := os.MkdirAll(filepath.Join(dst, e.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name(), "model.pt"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, e.Name(), "model.pt"), b, 0o644)
	}
	b, err := os.ReadFile(filepath.Join(src, bo.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dst, bo.ConfigFile), b, 0o644)
	os.WriteFile(filepath.Join(dst, bo.JournalFile), []byte(journal), 0o644)
}

// submitTask reports a job per evaluation, as a Slurm executor reports its
// arrays (its intent, then its submission), and records the jobs it is
// asked to re-attach to, answering with attach's error.
type submitTask struct {
	botest.Task
	mu       *sync.Mutex
	onSubmit *func(bo.Job) error
	attached *[]bo.Job
	attach   func(bo.Job) error
}

func (s submitTask) Score(x []float64) (float64, error) {
	s.mu.Lock()
	f := *s.onSubmit
	s.mu.Unlock()
	if f != nil {
		token := "token-" + s.Task.Key(x)
		if err := f(bo.Job{Token: token}); err != nil {
			return 0, err
		}
		if err := f(bo.Job{ID: "job-" + s.Task.Key(x), Token: token}); err != nil {
			return 0, err
		}
	}
	return s.Task.Score(x)
}

func (s submitTask) OnSubmit(f func(bo.Job) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.onSubmit = f
}

func (s submitTask) Attach(j bo.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.attached = append(*s.attached, j)
	if s.attach != nil {
		return s.attach(j)
	}
	return nil
}

// TestSubmitterJobs: the jobs a task reports are journaled (each intent
// before its submission), and a resumed run hands every journaled job back
// to the task before evaluating, an intent and its submission as one. A
// job journaled as an intent only (a kill between the two) is handed back
// by its token; one that never reached the scheduler is left, and one the
// task cannot tell about stops the resume.
func TestSubmitterJobs(t *testing.T) {
	p, data := newToy(t)
	newTask := func(attach func(bo.Job) error) (submitTask, *[]bo.Job) {
		var f func(bo.Job) error
		var attached []bo.Job
		return submitTask{Task: p.Task(), mu: new(sync.Mutex), onSubmit: &f, attached: &attached, attach: attach}, &attached
	}
	cfg := toyConfig()
	cfg.Budget, cfg.Q, cfg.SamplesPerModel = 6, 2, 0
	dir := t.TempDir()
	task, attached := newTask(nil)
	res, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n := journalCount(dir, `"job"`); n != 2*res.Evaluated || len(*attached) != 0 {
		t.Fatalf("%d job records journaled for %d evaluations, %d attached; want an intent and a submission each and none attached",
			n, res.Evaluated, len(*attached))
	}
	cfg.Budget = 8
	task, attached = newTask(nil)
	if _, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Resume: true}); err != nil {
		t.Fatal(err)
	}
	if len(*attached) != 6 || !strings.HasPrefix((*attached)[0].ID, "job-") || !strings.HasPrefix((*attached)[0].Token, "token-") {
		t.Errorf("the resumed run attached %v, want the 6 journaled jobs with their ids and tokens", *attached)
	}
	if n := journalCount(dir, `"job"`); n != 16 {
		t.Errorf("%d job records journaled after the resume, want 16", n)
	}

	// A kill between an intent and its submission: the intent alone.
	appendJournal := func(line string) {
		f, err := os.OpenFile(filepath.Join(dir, bo.JournalFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	appendJournal(`{"job":{"token":"token-lost"}}`)
	var logs []string
	logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	task, attached = newTask(func(j bo.Job) error {
		if j.Token == "token-lost" {
			return fmt.Errorf("array-0009: %w", bo.ErrNotSubmitted)
		}
		return nil
	})
	if _, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Resume: true, Logf: logf}); err != nil {
		t.Fatalf("resume with an intent that never reached the scheduler: %v", err)
	}
	if last := (*attached)[len(*attached)-1]; len(*attached) != 9 || last != (bo.Job{Token: "token-lost"}) {
		t.Errorf("attached %v, want the 8 jobs and the intent by its token", *attached)
	}
	if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "token-lost") && strings.Contains(l, "submitted now") }) {
		t.Errorf("logs %q: want a note that the intent's evaluations are submitted now", logs)
	}
	appendJournal(`{"job":{"token":"token-unknown"}}`)
	task, _ = newTask(func(j bo.Job) error {
		if j.Token == "token-unknown" {
			return errors.New("squeue: cannot reach slurmctld")
		}
		return nil
	})
	if _, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Resume: true}); err == nil ||
		!strings.Contains(err.Error(), "token-unknown") || !strings.Contains(err.Error(), "cannot be told") {
		t.Errorf("resume with an intent the task cannot tell about: %v, want it refused, naming the token", err)
	}
}

// TestRunHeldLock: a caller that took the run directory's lock (to score a
// labelled start first) hands it to Run, which holds it instead of taking
// a second one, the only lock of the run; a lock of another directory is
// refused, and without a lock a second process's lock makes Run fail.
func TestRunHeldLock(t *testing.T) {
	p, data := newToy(t)
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 2, 0
	dir, other := t.TempDir(), t.TempDir()
	lock, err := bo.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := bo.CheckRunDir(bo.Options{Dir: dir, Lock: lock}); err != nil {
		t.Errorf("CheckRunDir with the caller's lock: %v", err)
	}
	if _, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir}); err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf("in use by another process (pid %d)", os.Getpid())) {
		t.Errorf("Run without the held lock: %v, want the lock's holder named", err)
	} else if !errors.Is(err, bo.ErrRunDirInUse) {
		t.Errorf("Run without the held lock: %v does not wrap bo.ErrRunDirInUse", err)
	}
	if _, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: other, Lock: lock}); err == nil ||
		!strings.Contains(err.Error(), "not of the run directory") {
		t.Errorf("Run with another directory's lock: %v, want it refused", err)
	}
	if _, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir, Lock: lock}); err != nil {
		t.Fatalf("Run with the caller's lock: %v", err)
	}
	if _, err := bo.LockDir(dir); err == nil {
		t.Error("the lock was released by Run: want the caller to hold it until it unlocks")
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if l, err := bo.LockDir(dir); err != nil {
		t.Errorf("after Unlock: %v", err)
	} else {
		l.Unlock()
	}
}

// TestRoundDecodesInPasses: a round's proposals are decoded together, one
// batch per pass (the open proposals), not one at a time; with q = 1 every
// acquisition step decodes alone.
func TestRoundDecodesInPasses(t *testing.T) {
	p, data := newToy(t)
	for _, q := range []int{1, 4} {
		t.Run(fmt.Sprint(q), func(t *testing.T) {
			m := p.Model()
			m.Grid = 0.25 // known objects keep proposals open for later passes
			cfg := toyConfig()
			cfg.Budget, cfg.SamplesPerModel, cfg.Q = 20, 0, q
			res, err := bo.Run[[]float64](cfg, p.Task(), m, data, bo.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			checkNoRepeat(t, res, p.Task(), data)
			steps := 0 // acquisition steps: every journaled query but the fallbacks' (and in-round duplicates, not journaled)
			for _, qr := range res.Queries {
				if qr.Fallback == "" {
					steps++
				}
			}
			calls, points, largest := 0, 0, 0
			for _, n := range m.Batches {
				if n > q { // the ball fallback's batches
					continue
				}
				calls, points, largest = calls+1, points+n, max(largest, n)
			}
			t.Logf("q %d: %d acquisition steps journaled, %d points decoded in %d passes", q, steps, points, calls)
			if points < steps {
				t.Errorf("%d points decoded in passes for %d journaled acquisition steps", points, steps)
			}
			if largest != q {
				t.Errorf("largest pass decoded %d points, want q = %d", largest, q)
			}
			if q > 1 && calls*2 > points {
				t.Errorf("%d decode calls for %d points: the round's points are not decoded together", calls, points)
			}
		})
	}
}
