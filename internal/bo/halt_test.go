package bo_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// haltConfig is the toy configuration without prior samples (every
// evaluation is a query's) and with q proposals a round.
func haltConfig(q int) bo.Config {
	cfg := toyConfig()
	cfg.Q, cfg.SamplesPerModel = q, 0
	return cfg
}

// scriptedTask scores the toy objective, except that script, given the
// call's number (from 1), may return an error instead; every evaluation it
// lets through is appended to evaluated (shared across runs).
type scriptedTask struct {
	botest.Task
	calls     *atomic.Int64
	script    func(n int64) error
	mu        *sync.Mutex
	evaluated *[]string
}

func newScripted(p *botest.Problem, evaluated *[]string, script func(int64) error) scriptedTask {
	return scriptedTask{Task: p.Task(), calls: new(atomic.Int64), script: script, mu: new(sync.Mutex), evaluated: evaluated}
}

func (s scriptedTask) Score(x []float64) (float64, error) {
	if err := s.script(s.calls.Add(1)); err != nil {
		var h *bo.Halt
		if !errors.As(err, &h) || h.Failure != "" {
			s.record(x) // a failed evaluation was made
		}
		return 0, err
	}
	s.record(x)
	return s.Task.Score(x)
}

func (s scriptedTask) record(x []float64) {
	s.mu.Lock()
	*s.evaluated = append(*s.evaluated, s.Task.Key(x))
	s.mu.Unlock()
}

// noRepeats fails the test when a key was evaluated twice.
func noRepeats(t *testing.T, evaluated []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range evaluated {
		if seen[k] {
			t.Errorf("%s evaluated twice", k)
		}
		seen[k] = true
	}
}

var errBroken = errors.New("the program is broken")

// TestHaltAfterFailures: the first three evaluations fail, the third with
// a Halt carrying its failure (a program found broken): the run stops at
// once, its journal holding the three failures (counted against the
// budget), no fourth evaluation is asked for, and Run's error is the
// Halt's. A resume with the objective fixed keeps the three, evaluates
// the rest of the budget, and evaluates no object twice.
func TestHaltAfterFailures(t *testing.T) {
	p, data := newToy(t)
	cfg := haltConfig(1)
	dir := t.TempDir()
	var evaluated []string
	broken := newScripted(p, &evaluated, func(n int64) error {
		switch {
		case n < 3:
			return fmt.Errorf("exit status 1 (call %d)", n)
		case n == 3:
			return &bo.Halt{Err: errBroken, Failure: "exit status 1 (call 3)"}
		}
		return &bo.Halt{Err: errBroken} // asked after the stop: never run
	})
	res, err := bo.Run[[]float64](cfg, broken, p.Model(), data, bo.Options{Dir: dir})
	if !errors.Is(err, errBroken) {
		t.Fatalf("run: %v, want the Halt's error", err)
	}
	if n := broken.calls.Load(); n != 3 {
		t.Errorf("the objective was asked %d times, want 3 (nothing after the Halt)", n)
	}
	made := evaluatedQueries(res.Queries)
	if len(made) != 3 || res.Evaluated != 3 {
		t.Fatalf("%d queries evaluated (%d counted); want the 3 failures", len(made), res.Evaluated)
	}
	for i, q := range made {
		if want := fmt.Sprintf("exit status 1 (call %d)", i+1); q.Failure != want || q.Score != p.Task().FailureScore() {
			t.Errorf("query %d: score %v, failure %q; want the failure score and %q", q.Index, q.Score, q.Failure, want)
		}
	}
	fixed := newScripted(p, &evaluated, func(int64) error { return nil })
	got, err := bo.Run[[]float64](cfg, fixed, p.Model(), data, bo.Options{Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Resumed != len(res.Queries) || got.Evaluated != cfg.Budget || fixed.calls.Load() != int64(cfg.Budget-3) {
		t.Errorf("resumed %d, evaluated %d, %d new evaluations; want %d, %d and %d", got.Resumed, got.Evaluated, fixed.calls.Load(),
			len(res.Queries), cfg.Budget, cfg.Budget-3)
	}
	if g, w := stripTiming(got.Queries[:len(res.Queries)]), stripTiming(res.Queries); !reflect.DeepEqual(g, w) {
		t.Errorf("the resumed run's first queries differ from those journaled before the stop:\n got %+v\nwant %+v", g, w)
	}
	noRepeats(t, evaluated)
}

// TestHaltStopInsideRound: with q = 4, the sixth evaluation (in the
// second round) is not made: the objective is stopped by the run's
// context, as a signal stops optimize. The round's other evaluations are
// awaited and journaled, the stopped one is not, and Run's error wraps the
// context's cause. The resumed run evaluates only the missing one and then
// equals an uninterrupted run; no object is evaluated twice or lost.
func TestHaltStopInsideRound(t *testing.T) {
	p, data := newToy(t)
	cfg := haltConfig(4)
	ref, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stopped := errors.New("stopped by SIGTERM")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var evaluated []string
	task := newScripted(p, &evaluated, func(n int64) error {
		if n == 6 {
			cancel(stopped)
		}
		if ctx.Err() != nil {
			return &bo.Halt{Err: context.Cause(ctx)}
		}
		return nil
	})
	_, err = bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Context: ctx})
	if !errors.Is(err, stopped) {
		t.Fatalf("run: %v, want the context's cause", err)
	}
	if c := task.calls.Load(); c > 8 {
		t.Errorf("the objective was asked %d times: want no new round after the stop (at most the second's 8)", c)
	}
	if n := journalCount(dir, `"eval"`); n != len(evaluated) {
		t.Errorf("%d evaluations journaled, %d made: want each made one journaled and no other", n, len(evaluated))
	}
	fixed := newScripted(p, &evaluated, func(int64) error { return nil })
	got, err := bo.Run[[]float64](cfg, fixed, p.Model(), data, bo.Options{Dir: dir, Resume: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	sameQueries(t, got.Queries, ref.Queries)
	noRepeats(t, evaluated)
	if len(evaluated) != ref.Evaluated {
		t.Errorf("%d evaluations in all, want %d", len(evaluated), ref.Evaluated)
	}
}

// TestHaltContextBuiltin: a task that knows nothing of the context (a
// built-in objective) is stopped between rounds; the resumed run equals
// an uninterrupted one.
func TestHaltContextBuiltin(t *testing.T) {
	stopAndResume(t, haltConfig(1), 12, func(p *botest.Problem, stop func()) (bo.Task[[]float64], func(bo.Progress)) {
		var evaluated []string
		return newScripted(p, &evaluated, func(n int64) error {
			if n == 12 {
				stop()
			}
			return nil
		}), nil
	})
}

// stopAndResume runs cfg on the toy problem, with the task and progress
// that arrange give, under a context that their stop() ends (as SIGINT
// does); the run must end with the context's cause after want evaluations,
// none of them a random fallback, and resuming it must give the queries of
// an uninterrupted run.
func stopAndResume(t *testing.T, cfg bo.Config, want int,
	arrange func(p *botest.Problem, stop func()) (bo.Task[[]float64], func(bo.Progress))) {
	t.Helper()
	p, data := newToy(t)
	ref, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopped := errors.New("stopped by SIGINT")
	task, progress := arrange(p, func() { cancel(stopped) })
	res, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Context: ctx, Progress: progress})
	if !errors.Is(err, stopped) || res.Evaluated != want {
		t.Fatalf("run: %v after %d evaluations, want the context's cause after %d", err, res.Evaluated, want)
	}
	for _, q := range res.Queries {
		if q.Random {
			t.Errorf("query %d fell back to random points (%s)", q.Index, q.RandomReason)
		}
	}
	got, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	sameQueries(t, got.Queries, ref.Queries)
}

// TestFailureNeverBest: a start object whose evaluation failed
// (Data.Failed) and queries that failed are never reported as the best,
// even when their score is the best of all: Result, results.npz
// (initial_best, opt_failed) and the curve skip them, and a run where
// nothing succeeded has no best (NaN, no object).
func TestFailureNeverBest(t *testing.T) {
	p, data := newToy(t)
	cfg := haltConfig(1)
	cfg.Budget, cfg.RetrainEvery = 4, 4
	// The toy minimises: mark its best start object as failed, and make
	// failures score better than anything (-1 < log(1 + d²)).
	best := 0
	for i, s := range data.Scores {
		if s < data.Scores[best] {
			best = i
		}
	}
	second := math.Inf(1)
	for i, s := range data.Scores {
		if i != best {
			second = min(second, s)
		}
	}
	data.Failed = make([]bool, data.Len())
	data.Failed[best] = true
	var evaluated []string
	task := failScoreTask{newScripted(p, &evaluated, func(n int64) error {
		if n <= 2 {
			return errors.New("crashed")
		}
		return nil
	})}
	dir := t.TempDir()
	res, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.InitialBest != second {
		t.Errorf("best of the start %v, want %v: the best start object failed", res.InitialBest, second)
	}
	for _, q := range res.Top(10) {
		if q.Failure != "" {
			t.Errorf("Top lists the failed query %d (%s)", q.Index, q.Failure)
		}
	}
	if res.BestObject == "" || res.Best == -1 {
		t.Errorf("best %v (%q): want a successful evaluation's", res.Best, res.BestObject)
	}
	if made := evaluatedQueries(res.Queries); len(made) != 4 || made[0].Failure != "crashed" || made[1].Failure != "crashed" ||
		made[2].Failure != "" || made[3].Failure != "" {
		t.Fatalf("evaluated queries %+v: want the first two failed", made)
	}
	wantFailed := make([]float64, len(res.Queries))
	for i, q := range res.Queries {
		if q.Failure != "" {
			wantFailed[i] = 1
		}
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		switch a.Name {
		case "opt_failed":
			if f, _ := a.Float64s(); !slices.Equal(f, wantFailed) {
				t.Errorf("opt_failed %v, want %v (the queries with a failure)", f, wantFailed)
			}
		case "initial_best":
			if f, _ := a.Float64s(); len(f) != 1 || f[0] != second {
				t.Errorf("initial_best %v, want %v", f, second)
			}
		}
	}
	cv, err := bo.ReadCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range cv.Best {
		if b == -1 {
			t.Errorf("curve point %d is the failure score", i)
		}
	}

	// Nothing succeeds: no best anywhere.
	for i := range data.Failed {
		data.Failed[i] = true
	}
	none := failScoreTask{newScripted(p, &evaluated, func(int64) error { return errors.New("crashed") })}
	dir = t.TempDir()
	res, err = bo.Run[[]float64](cfg, none, p.Model(), data, bo.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(res.Best) || res.BestObject != "" || !math.IsNaN(res.InitialBest) || len(res.Top(5)) != 0 {
		t.Errorf("every evaluation failed: best %v (%q), start's %v, top %v; want NaN, no object, NaN, none", res.Best,
			res.BestObject, res.InitialBest, res.Top(5))
	}
	if cv, err = bo.ReadCurve(dir); err != nil {
		t.Fatal(err)
	}
	for i, b := range cv.Best {
		if !math.IsNaN(b) {
			t.Errorf("curve point %d is %v, want NaN (no evaluation succeeded)", i, b)
		}
	}
}

// evaluatedQueries returns the queries whose object was evaluated (not
// known, not an invalid decode).
func evaluatedQueries(qs []bo.Query) []bo.Query {
	var out []bo.Query
	for _, q := range qs {
		if q.Valid && !q.Known {
			out = append(out, q)
		}
	}
	return out
}

// failScoreTask scores failures -1, better than any toy score.
type failScoreTask struct{ scriptedTask }

func (failScoreTask) FailureScore() float64 { return -1 }

// TestResumeNeedsRun: --resume on a directory that holds no run (missing,
// or without a configuration, journal or lock) is refused, naming it; a
// directory whose run took its lock (stopped before its first journal
// line) resumes.
func TestResumeNeedsRun(t *testing.T) {
	p, data := newToy(t)
	root := t.TempDir()
	missing := filepath.Join(root, "typo")
	for _, dir := range []string{missing, root} {
		if err := bo.CheckRunDir(bo.Options{Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), dir+" holds no run") {
			t.Errorf("CheckRunDir --resume on %s: %v, want an error saying it holds no run", dir, err)
		}
		_, err := bo.Run[[]float64](haltConfig(1), p.Task(), p.Model(), data, bo.Options{Dir: dir, Resume: true})
		if err == nil || !strings.Contains(err.Error(), "holds no run") {
			t.Errorf("Run --resume on %s: %v, want an error saying it holds no run", dir, err)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the refused resume created %s", missing)
	}
	l, err := bo.LockDir(root)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if err := bo.CheckRunDir(bo.Options{Dir: root, Resume: true}); err != nil {
		t.Errorf("a run directory with its lock: %v", err)
	}
}

// TestHaltDuringFit: a stop that comes while the GP is being fitted from
// scratch (a version's first fit: minutes on the paper's GP sizes) gives
// the fit up there: no query of the new version is proposed, journaled or
// evaluated, none falls back to random points for want of a GP, and the
// resumed run equals an uninterrupted one. Before, the fit ran to its end
// and the round's query was evaluated after the stop. For both loops (the
// rounds and the authors' novelty check).
func TestHaltDuringFit(t *testing.T) {
	for _, repeats := range []bo.Repeats{bo.RepeatsSkip, bo.RepeatsAuthors} {
		t.Run(string(repeats), func(t *testing.T) {
			cfg := haltConfig(1)
			cfg.Repeats = repeats
			stopAndResume(t, cfg, cfg.RetrainEvery, func(p *botest.Problem, stop func()) (bo.Task[[]float64], func(bo.Progress)) {
				fits := 0
				return p.Task(), func(pr bo.Progress) {
					if pr.Stage == bo.StageFit {
						if fits++; fits == 2 { // the second version's first fit
							stop()
						}
					}
				}
			})
		})
	}
}
