package bo_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// toyConfig is a small, fast configuration for the toy problem: three
// versions of ten queries on a 3-dimensional latent space.
func toyConfig() bo.Config {
	c := bo.DefaultConfig()
	c.Budget = 30
	c.RetrainEvery = 10
	c.RankK, c.InitialRetrainEpochs, c.RetrainEpochs = 1e-3, 1, 1
	c.NBest, c.NRand = 40, 40
	c.Inducing = 30
	c.RawSamples, c.Restarts = 256, 3
	c.SamplesPerModel = 5
	c.Seed = 7
	c.Extra = map[string]string{"task": "toy"}
	// The authors' schedule, whose fit at every query the tests' reference
	// runs were written for; the other schedules' tests set theirs.
	c.GPRefit = bo.GPRefitEvery
	return c
}

func newToy(t testing.TB) (*botest.Problem, bo.Data[[]float64]) {
	t.Helper()
	p, err := botest.New(3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p, p.Data(200, 2)
}

// runToy runs (or resumes) the toy configuration in dir.
func runToy(t testing.TB, cfg bo.Config, dir string, resume bool, task bo.Task[[]float64], logf func(string, ...any)) (*bo.Result, error) {
	p, data := newToy(t)
	if task == nil {
		task = p.Task()
	}
	return bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Resume: resume, Logf: logf})
}

// stripTiming returns the queries without their timings, for comparisons.
func stripTiming(qs []bo.Query) []bo.Query {
	out := make([]bo.Query, len(qs))
	for i, q := range qs {
		q.Timing = bo.Timing{}
		out[i] = q
	}
	return out
}

// sameQueries reports the first difference between two runs' queries.
func sameQueries(t *testing.T, got, want []bo.Query) {
	t.Helper()
	g, w := stripTiming(got), stripTiming(want)
	if len(g) != len(w) {
		t.Fatalf("%d queries, want %d", len(g), len(w))
	}
	for i := range g {
		if !reflect.DeepEqual(g[i], w[i]) {
			t.Fatalf("query %d differs:\n got %+v\nwant %+v", i, g[i], w[i])
		}
	}
}

// reference runs the toy configuration once, uninterrupted, per test binary.
var referenceRun *bo.Result

func reference(t *testing.T) *bo.Result {
	t.Helper()
	if referenceRun == nil {
		res, err := runToy(t, toyConfig(), t.TempDir(), false, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		referenceRun = res
	}
	return referenceRun
}

func TestToyImproves(t *testing.T) {
	res := reference(t)
	if res.Evaluated != 30 || len(res.Versions) != 3 || res.Exhausted != "" {
		t.Fatalf("%d evaluations in %d versions (exhausted %q), want 30 in 3", res.Evaluated, len(res.Versions), res.Exhausted)
	}
	if !(res.Best < res.InitialBest) {
		t.Errorf("best %.4f does not improve on the start %.4f", res.Best, res.InitialBest)
	}
	t.Logf("initial best %.4f, best %.4f", res.InitialBest, res.Best)
	top := res.Top(3)
	if len(top) != 3 || top[0].Score != res.Best || top[0].Score > top[1].Score || top[1].Score > top[2].Score {
		t.Errorf("top 3 %+v do not start with the best %v in order", top, res.Best)
	}
}

func TestDeterministic(t *testing.T) {
	want := reference(t)
	got, err := runToy(t, toyConfig(), t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameQueries(t, got.Queries, want.Queries)
}

func TestRandomSearch(t *testing.T) {
	p, data := newToy(t)
	// The box of the encoded start (the version-0 model is centred near 0,
	// the retraining moves it little): data range widened by 10% each side.
	z, err := p.Model().Encode(data.Objects)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := make([]float64, 3), make([]float64, 3)
	for k := range lo {
		col := make([]float64, len(data.Objects))
		for i := range col {
			col[i] = z.At(i, k)
		}
		a, b := slices.Min(col), slices.Max(col)
		lo[k], hi[k] = a-0.1*(b-a)-1, b+0.1*(b-a)+1
	}
	for _, strategy := range []bo.Strategy{bo.StrategyRandom, bo.StrategyPrior} {
		t.Run(string(strategy), func(t *testing.T) {
			cfg := toyConfig()
			cfg.Strategy = strategy
			res, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Queries) != cfg.Budget || res.Evaluated != cfg.Budget {
				t.Fatalf("%d queries and %d evaluations, want %d", len(res.Queries), res.Evaluated, cfg.Budget)
			}
			seen := map[string]bool{}
			for _, q := range res.Queries {
				if q.Timing.GPFit != 0 || q.Acq != 0 || q.GP != nil {
					t.Fatalf("%s query %d fitted a GP: %+v", strategy, q.Index, q)
				}
				if !q.Valid || q.Duplicate || seen[q.Object] {
					t.Errorf("%s query %d: valid %v, duplicate %v, object %s", strategy, q.Index, q.Valid, q.Duplicate, q.Object)
				}
				seen[q.Object] = true
				if q.Draws < 1 || q.Perturbations != 0 || q.Known {
					t.Errorf("%s query %d: %d draws, %d perturbations, known %v; want >= 1 draw, no perturbation, a new object",
						strategy, q.Index, q.Draws, q.Perturbations, q.Known)
				}
				if strategy == bo.StrategyPrior {
					continue
				}
				if q.Draws < 1 || q.Perturbations != 0 {
					t.Errorf("random query %d: %d draws, %d perturbations; want >= 1 draw and no perturbation", q.Index, q.Draws, q.Perturbations)
				}
				for k, v := range q.Z {
					if v < lo[k] || v > hi[k] {
						t.Errorf("random query %d: z[%d] = %.3f outside the encoded data's box [%.3f, %.3f]", q.Index, k, v, lo[k], hi[k])
					}
				}
			}
		})
	}
}

// TestRandomSearchRedraws: the data hold most of what the decoder can
// produce, so draws decode to seen objects and are redrawn.
func TestRandomSearchRedraws(t *testing.T) {
	cfg := toyConfig()
	cfg.Strategy, cfg.Budget, cfg.SamplesPerModel = bo.StrategyRandom, 10, 0
	cfg.Repeats = bo.RepeatsAuthors
	res, err := bo.Run[float64](cfg, coarseTask{}, coarseModel{}, coarseData(), bo.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	redrawn := 0
	for _, q := range res.Queries {
		if q.Draws > 1 {
			redrawn++
		}
		if !q.Duplicate && (!q.Valid || q.Draws > bo.RandomDraws) {
			t.Errorf("query %d: valid %v after %d draws", q.Index, q.Valid, q.Draws)
		}
		if q.Duplicate && q.Draws != bo.RandomDraws {
			t.Errorf("query %d: a duplicate after %d draws, want %d", q.Index, q.Draws, bo.RandomDraws)
		}
	}
	if redrawn == 0 {
		t.Error("no query redrew; the test checks nothing")
	}
}

// coarseTask and coarseModel: objects are the integers 0..20 (score -x),
// decoded from z in R^1 by rounding; the data hold 0..17.
type coarseTask struct{}

func (coarseTask) Score(x float64) (float64, error) { return -x, nil }
func (coarseTask) FailureScore() float64            { return -100 }
func (coarseTask) Maximize() bool                   { return true }
func (coarseTask) Deterministic() bool              { return true }
func (coarseTask) Key(x float64) string             { return fmt.Sprint(x) }
func (coarseTask) Parse(k string) (float64, error) {
	var x float64
	_, err := fmt.Sscan(k, &x)
	return x, err
}

type coarseModel struct{}

func (coarseModel) LatentDim() int       { return 1 }
func (coarseModel) Accept(float64) error { return nil }
func (coarseModel) Encode(xs []float64) (*mat.Dense, error) {
	return mat.NewDense(len(xs), 1, append([]float64(nil), xs...)), nil
}
func (coarseModel) Decode(z *mat.Dense, _ uint64) ([]float64, []bool, error) {
	n, _ := z.Dims()
	xs, ok := make([]float64, n), make([]bool, n)
	for i := range xs {
		xs[i] = math.Round(z.At(i, 0))
		ok[i] = xs[i] >= 0 && xs[i] <= 20
	}
	return xs, ok, nil
}
func (coarseModel) Retrain(bo.RetrainRequest[float64]) (map[string]float64, error) { return nil, nil }
func (coarseModel) Save(string) error                                              { return nil }
func (coarseModel) Load(string) error                                              { return nil }

func coarseData() bo.Data[float64] {
	var d bo.Data[float64]
	for x := 0.0; x <= 17; x++ {
		d.Objects, d.Scores = append(d.Objects, x), append(d.Scores, -x)
	}
	return d
}

// TestJournalRecords checks the records of the retrainings, GP fits and
// incumbents against the run they describe.
func TestJournalRecords(t *testing.T) {
	res := reference(t)
	p, data := newToy(t)
	for _, v := range res.Versions {
		if s, ok := v.Losses["shift"]; !ok || !(s > 0) {
			t.Errorf("version %d records losses %v, want the toy's positive shift", v.Version, v.Losses)
		}
	}
	best := slices.Min(data.Scores)
	task := p.Task()
	for _, q := range res.Queries {
		if q.Valid {
			best = math.Min(best, q.Score)
		}
		if q.Incumbent != best {
			t.Errorf("query %d: incumbent %v, want %v", q.Index, q.Incumbent, best)
		}
		// A round fits the GP once, on the version's 80 encoded points and
		// every earlier query of the version (known objects and invalid
		// decodes included).
		g := q.GP
		if q.Index != q.Round {
			if g != nil {
				t.Errorf("query %d (round %d) records a GP fit", q.Index, q.Round)
			}
			continue
		}
		verStart := slices.IndexFunc(res.Queries, func(p bo.Query) bool { return p.Version == q.Version })
		first := verStart == q.Index
		switch {
		case g == nil:
			t.Fatalf("query %d records no GP fit", q.Index)
		case g.Warm == first:
			t.Errorf("query %d: warm %v, want %v", q.Index, g.Warm, !first)
		case g.Points != 80+q.Index-verStart:
			t.Errorf("query %d: GP on %d points, want %d", q.Index, g.Points, 80+q.Index-verStart)
		case !(g.Noise > 0 && g.Outputscale > 0 && g.LengthscaleMin > 0 && g.LengthscaleMin <= g.LengthscaleMax) || g.LogLik == 0:
			t.Errorf("query %d: GP record %+v", q.Index, *g)
		}
		if q.Proposed != nil {
			x, _ := task.Parse(q.Object)
			if s, _ := task.Score(x); s != q.Score || q.Perturbations == 0 {
				t.Errorf("query %d: perturbed from %v with %d perturbations", q.Index, q.Proposed, q.Perturbations)
			}
		}
	}
}

func TestResultsNPZ(t *testing.T) {
	dir := t.TempDir()
	res, err := runToy(t, toyConfig(), dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]numpy.Array{}
	for _, a := range arrays {
		byName[a.Name] = a
	}
	for _, k := range []string{"opt_points", "opt_point_properties", "opt_model_version", "sample_points",
		"sample_versions", "sample_properties", "rand_point_due_bo_fail", "params", "initial_best", "opt_latents"} {
		if _, ok := byName[k]; !ok {
			t.Errorf("results.npz lacks %s", k)
		}
	}
	props := byName["opt_point_properties"].Data.([]float64)
	points := byName["opt_points"].Data.([]string)
	vers := byName["opt_model_version"].Data.([]int64)
	for i, q := range res.Queries {
		if props[i] != q.Score || points[i] != q.Object || vers[i] != int64(q.Version) {
			t.Fatalf("results.npz row %d = (%q, %v, %d), journal (%q, %v, %d)", i, points[i], props[i], vers[i], q.Object, q.Score, q.Version)
		}
	}
	if got := byName["sample_points"].Len(); got != 15 {
		t.Errorf("%d sample points, want 3 versions x 5", got)
	}
	if got := byName["opt_latents"].Shape; !reflect.DeepEqual(got, []int{len(res.Queries), 3}) {
		t.Errorf("opt_latents shape %v, want [%d 3]", got, len(res.Queries))
	}
	known := byName["opt_known"].Data.([]int64)
	nKnown := 0
	for i, q := range res.Queries {
		if (known[i] == 1) != q.Known {
			t.Errorf("results.npz opt_known[%d] = %d, journal known %v", i, known[i], q.Known)
		}
		nKnown += int(known[i])
	}
	if len(res.Queries) != 30+nKnown+invalid(res.Queries) {
		t.Errorf("%d queries with %d known and %d invalid, want 30 evaluations besides them",
			len(res.Queries), nKnown, invalid(res.Queries))
	}
}

func TestRefuseOtherConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := toyConfig()
	cfg.Budget = 3
	if _, err := runToy(t, cfg, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.RankK = 1e-2
	other.Extra = map[string]string{"task": "toy", "vae": "other.pt"}
	_, err := runToy(t, other, dir, true, nil, nil)
	if err == nil {
		t.Fatal("resume with another k and model was accepted")
	}
	for _, want := range []string{`k: the run has "0.001", now "0.01"`, `vae: the run has none, now "other.pt"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := runToy(t, cfg, dir, false, nil, nil); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a second run in the same directory without --resume: %v, want a refusal naming --resume", err)
	}
	// A larger budget extends the run.
	cfg.Budget = 5
	res, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 5 || res.Resumed != 3 {
		t.Errorf("extended run has %d queries (%d resumed), want 5 (3)", len(res.Queries), res.Resumed)
	}
}

// TestResumeLegacyRun: a run made before restart-selection and novelty-redo
// existed (its "random" meant prior sampling) resumes with its own
// settings, and the error of a resume with today's defaults names them.
func TestResumeLegacyRun(t *testing.T) {
	dir := t.TempDir()
	old := toyConfig()
	old.Strategy, old.RestartSelection, old.NoveltyRedo, old.Budget = bo.StrategyPrior, "best", 0, 3
	if _, err := runToy(t, old, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	m := readConfigFile(t, dir)
	delete(m, "restart-selection")
	delete(m, "novelty-redo")
	m["strategy"] = "random"
	writeConfigFile(t, dir, m)
	now := toyConfig()
	now.Strategy, now.Budget = bo.StrategyRandom, 5
	_, err := runToy(t, now, dir, true, nil, nil)
	for _, want := range []string{`strategy: the run has "prior", now "random"`, `restart-selection: the run has "best", now "boltzmann"`,
		`novelty-redo: the run has "0", now "3"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume of a legacy run with today's defaults: %v, want an error naming %s", err, want)
		}
	}
	old.Budget = 5
	res, err := runToy(t, old, dir, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 3 || len(res.Queries) != 5 {
		t.Errorf("legacy run resumed %d queries and ended with %d, want 3 and 5", res.Resumed, len(res.Queries))
	}
}

// crashTask panics at evaluation number `at`, as a kill during an
// evaluation would stop the run.
type crashTask struct {
	botest.Task
	n, at int
}

func (c *crashTask) Score(x []float64) (float64, error) {
	c.n++
	if c.n == c.at {
		panic("crash")
	}
	return c.Task.Score(x)
}

// runUntilPanic runs the toy configuration until the task panics.
func runUntilPanic(t *testing.T, dir string, at int) {
	t.Helper()
	crashRun(t, toyConfig(), dir, at)
}

// crashRun runs cfg in dir until the task panics at evaluation at.
func crashRun(t *testing.T, cfg bo.Config, dir string, at int) {
	t.Helper()
	p, _ := newToy(t)
	defer func() {
		if recover() == nil {
			t.Fatal("the run did not crash")
		}
	}()
	runToy(t, cfg, dir, false, &crashTask{Task: p.Task(), at: at}, nil)
}

func TestResumeAfterCrash(t *testing.T) {
	want := reference(t)
	// Each version first scores 5 prior samples: crashes while sampling for
	// version 0, in the first query, at the last query of version 0 and in
	// version 1.
	for _, at := range []int{3, 5 + 1, 5 + 10, 5 + 10 + 5 + 3} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			dir := t.TempDir()
			runUntilPanic(t, dir, at)
			got, err := runToy(t, toyConfig(), dir, true, nil, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			if got.Resumed == 0 && at > 6 {
				t.Errorf("nothing resumed after crashing at evaluation %d", at)
			}
			sameQueries(t, got.Queries, want.Queries)
		})
	}
}

func TestTornJournalLine(t *testing.T) {
	want := reference(t)
	dir := t.TempDir()
	runUntilPanic(t, dir, 18)
	f, err := os.OpenFile(filepath.Join(dir, bo.JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"query":{"i":17,"version":1,"z":[0.1,`)
	f.Close()
	var logs bytes.Buffer
	got, err := runToy(t, toyConfig(), dir, true, nil, func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "torn last line") {
		t.Errorf("no warning about the torn line; logs:\n%s", logs.String())
	}
	sameQueries(t, got.Queries, want.Queries)
}

func TestCorruptJournal(t *testing.T) {
	dir := t.TempDir()
	runUntilPanic(t, dir, 5+4)
	path := filepath.Join(dir, bo.JournalFile)
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte(`"round"`), []byte(`"rovnd"`), 1)
	os.WriteFile(path, b, 0o644)
	_, err := runToy(t, toyConfig(), dir, true, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "journal.jsonl, line 2") {
		t.Errorf("corrupt journal: %v, want an error naming the file and line 2", err)
	}
}

// slowTask sleeps before each evaluation so that the parent test can kill
// the child process in the middle of the run.
type slowTask struct{ botest.Task }

func (s slowTask) Score(x []float64) (float64, error) {
	time.Sleep(15 * time.Millisecond)
	return s.Task.Score(x)
}

const childEnv = "BO_TEST_KILL_CHILD_DIR"

// TestKillChild is the child process of TestKillAndResume.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("child of TestKillAndResume only")
	}
	p, _ := newToy(t)
	if _, err := runToy(t, toyConfig(), dir, false, slowTask{p.Task()}, nil); err != nil {
		t.Fatal(err)
	}
}

// journalLines counts the complete lines of the journal in dir.
func journalLines(dir string) int {
	f, err := os.Open(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		n++
	}
	return n
}

// killChildAt starts the test function child in a process of its own with
// env set to dir, SIGKILLs it once the journal in dir has lines complete
// lines, and returns the lines it had then. The kill must hit a running
// child that has reached the kill point; a child that failed or finished
// early, or never got there, tests nothing.
func killChildAt(t *testing.T, child, env, dir string, lines int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for journalLines(dir) < lines {
		select {
		case err := <-done:
			t.Fatalf("the child ended by itself (%v) after %d journal lines, before the kill point %d", err, journalLines(dir), lines)
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("the child did not reach %d journal lines in 60 s (%d)", lines, journalLines(dir))
		case <-time.After(2 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	err := <-done
	killedAt := journalLines(dir)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("the child ended by itself (%v) before it was killed, after %d journal lines", err, killedAt)
	}
	return killedAt
}

func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	want := reference(t)
	for _, lines := range []int{3, 16} { // in version 0, and in version 1 (GP replay)
		t.Run(fmt.Sprint(lines), func(t *testing.T) {
			dir := t.TempDir()
			killedAt := killChildAt(t, "TestKillChild", childEnv, dir, lines)
			if killedAt >= 63 {
				t.Fatalf("the child finished (%d journal lines) before it was killed", killedAt)
			}
			got, err := runToy(t, toyConfig(), dir, true, nil, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("killed after %d journal lines; %d queries resumed", killedAt, got.Resumed)
			if got.Resumed == 0 && killedAt > 2 {
				t.Errorf("nothing resumed from %d journal lines", killedAt)
			}
			sameQueries(t, got.Queries, want.Queries)
			if journalLines(dir) != 63 {
				t.Errorf("journal has %d lines, want 30 rounds and their evaluations + 3 versions", journalLines(dir))
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	p, data := newToy(t)
	dir := t.TempDir()
	cfg := toyConfig()
	cfg.Acq = acq.KindUCB // the loop maximises EI or log-EI only
	if _, err := bo.Run(cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "acq") {
		t.Errorf("acq ucb: %v, want an error naming acq", err)
	}
	bad := bo.Data[[]float64]{Objects: data.Objects[:2], Scores: []float64{1, math.NaN()}}
	if _, err := bo.Run(toyConfig(), p.Task(), p.Model(), bad, bo.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "score 1") {
		t.Errorf("NaN score: %v, want an error naming score 1", err)
	}
	if _, err := bo.Run(toyConfig(), p.Task(), p.Model(), bo.Data[[]float64]{}, bo.Options{Dir: dir}); err == nil {
		t.Error("empty data accepted")
	}
}

func TestTauStopsInnerLoops(t *testing.T) {
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 6, 0
	cfg.Tau = 1e9 // every EI is below: one query per version
	dir := t.TempDir()
	res, err := runToy(t, cfg, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluated != 6 || len(res.Versions) != 6 {
		t.Fatalf("%d evaluations in %d versions, want 6 in 6", res.Evaluated, len(res.Versions))
	}
	perVersion := map[int]int{}
	for _, q := range res.Queries {
		if q.Valid && !q.Known {
			perVersion[q.Version]++
		}
	}
	for v := range 6 {
		if perVersion[v] != 1 {
			t.Errorf("version %d has %d evaluations, want 1", v, perVersion[v])
		}
	}
	if n := journalLines(dir); n != 2*6+6+5 {
		t.Errorf("journal has %d lines, want 6 rounds, their evaluations, 6 versions and 5 stops", n)
	}
	// A resumed run that ends on a stop retrains before its next query.
	cfg.Budget = 7
	more, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := more.Queries[len(more.Queries)-1]; q.Version != 6 || more.Evaluated != 7 {
		t.Errorf("the 7th evaluation after resuming in version %d, want 6", q.Version)
	}
}

// TestSemiSupervisedWarpedStart: a semi-supervised start retrains on the
// labelled fraction, and W-LBO's GP warps its inputs: every fit is warped,
// the warping learned moves away from the identity (a = b = 1), and the
// queries differ from those of the same run without warping, whose fits
// have no warping.
func TestSemiSupervisedWarpedStart(t *testing.T) {
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 12, 0
	cfg.LabelledFraction = 0.1 // 20 of the 200 labelled points
	cfg.Warp = true            // W-LBO
	res, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Warp = false
	plain, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for i, q := range res.Queries {
		g := q.GP
		if g == nil || q.Random {
			t.Fatalf("query %d: no GP fit (random %v)", i+1, q.Random)
		}
		if !(g.WarpMin > 0 && g.WarpMin <= g.WarpMax) {
			t.Errorf("query %d: warped fit with warping parameters in [%v, %v]", i+1, g.WarpMin, g.WarpMax)
		}
		if g.WarpMin < 0.95 || g.WarpMax > 1.05 {
			moved++
		}
		if p := plain.Queries[i].GP; p != nil && (p.WarpMin != 0 || p.WarpMax != 0) {
			t.Errorf("query %d without warping: warping parameters in [%v, %v]", i+1, p.WarpMin, p.WarpMax)
		}
	}
	if moved == 0 {
		t.Error("no fit learned a warping away from the identity")
	}
	if reflect.DeepEqual(stripTiming(res.Queries), stripTiming(plain.Queries)) {
		t.Error("the warped run made the queries of the unwarped one")
	}
	if got := res.Versions[0].Points; got != 20 {
		t.Errorf("version 0 retrained on %d points, want 20", got)
	}
	if got, want := res.Versions[1].Points, 20+10; got > want || got < 20 {
		t.Errorf("version 1 retrained on %d points, want 20 plus the valid queries (at most %d)", got, want)
	}
	if len(res.Queries) != 12 {
		t.Errorf("%d queries, want 12", len(res.Queries))
	}
}

func TestFITCObjective(t *testing.T) {
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 3, 0
	cfg.GPObjective = "fitc"
	res, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reference(t).Queries[0].GP
	got := res.Queries[0].GP
	if got == nil || got.LogLik == want.LogLik || got.Points != want.Points {
		t.Errorf("FITC fit %+v, Titsias fit %+v: want the same points and another objective value", got, want)
	}
	cfg.GPObjective = "dtc"
	if _, err := runToy(t, cfg, t.TempDir(), false, nil, nil); err == nil || !strings.Contains(err.Error(), "gp-objective") {
		t.Errorf("gp-objective dtc: %v, want an error naming gp-objective", err)
	}
}

// TestRandomSearchResume: a random-search run crashed in its second
// version resumes to the queries of an uninterrupted one (the box is
// rebuilt from the version's data and its journaled queries).
func TestRandomSearchResume(t *testing.T) {
	cfg := toyConfig()
	cfg.Strategy = bo.StrategyRandom
	want, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	crashRun(t, cfg, dir, 5+10+5+4)
	got, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resumed <= 10 || got.Resumed >= 20 {
		t.Errorf("%d queries resumed, want some of version 1's", got.Resumed)
	}
	sameQueries(t, got.Queries, want.Queries)
}

// invalid counts the invalid decodes among qs.
func invalid(qs []bo.Query) int {
	n := 0
	for _, q := range qs {
		if !q.Valid {
			n++
		}
	}
	return n
}

// TestJournalCPU checks the journal's cpu_s: every line has a non-negative
// one and their sum is the process's CPU time between the run's start and
// its last line, so at most what the process used around Run (to the
// microsecond a line) and more than nothing for a run that fits GPs.
func TestJournalCPU(t *testing.T) {
	dir := t.TempDir()
	before := rusage.CPUSecondsWithChildren()
	if _, err := runToy(t, toyConfig(), dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	used := rusage.CPUSecondsWithChildren() - before
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum, lines := 0.0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct {
			CPU *float64 `json:"cpu_s"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		lines++
		if rec.CPU != nil && !(*rec.CPU >= 0) {
			t.Errorf("line %d: cpu_s %v", lines, *rec.CPU)
		}
		if rec.CPU != nil {
			sum += *rec.CPU
		}
	}
	// Each line's cpu_s is rounded to the microsecond.
	if !(sum > 0 && sum <= used+float64(lines)*1e-6) {
		t.Errorf("journal's cpu_s sum to %.6f s over %d lines; the process used %.6f s around Run", sum, lines, used)
	}
	t.Logf("cpu_s: %.3f s over %d lines (%.3f s around Run)", sum, lines, used)
}

// readConfigFile returns the fields of the run's config.json in dir.
func readConfigFile(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bo.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeConfigFile replaces the run's config.json in dir by the fields m
// (a run made by an earlier release, for the resume tests).
func writeConfigFile(t *testing.T, dir string, m map[string]string) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
