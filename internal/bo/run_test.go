package bo_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// toyConfig is a small, fast configuration for the toy problem: three
// versions of ten queries on a 3-dimensional latent space.
func toyConfig() bo.Config {
	c := bo.DefaultConfig()
	c.Budget = 30
	c.RetrainEvery = 10
	c.NBest, c.NRand = 40, 40
	c.Inducing = 30
	c.RawSamples, c.Restarts = 256, 3
	c.SamplesPerModel = 5
	c.Seed = 7
	c.Extra = map[string]string{"task": "toy"}
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
	if len(res.Queries) != 30 || len(res.Versions) != 3 {
		t.Fatalf("%d queries in %d versions, want 30 in 3", len(res.Queries), len(res.Versions))
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
	cfg := toyConfig()
	cfg.Strategy = bo.StrategyRandom
	dir := t.TempDir()
	res, err := runToy(t, cfg, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != cfg.Budget {
		t.Fatalf("%d queries, want %d", len(res.Queries), cfg.Budget)
	}
	for _, q := range res.Queries {
		if q.Timing.GPFit != 0 || q.Acq != 0 {
			t.Fatalf("random search query %d fitted a GP: %+v", q.Index, q)
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
	if got := byName["opt_latents"].Shape; !reflect.DeepEqual(got, []int{30, 3}) {
		t.Errorf("opt_latents shape %v, want [30 3]", got)
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

// runUntilPanic runs until the task panics.
func runUntilPanic(t *testing.T, dir string, at int) {
	t.Helper()
	p, _ := newToy(t)
	defer func() {
		if recover() == nil {
			t.Fatal("the run did not crash")
		}
	}()
	runToy(t, toyConfig(), dir, false, &crashTask{Task: p.Task(), at: at}, nil)
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
	b = bytes.Replace(b, []byte(`"query"`), []byte(`"qvery"`), 1)
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

func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	want := reference(t)
	for _, lines := range []int{3, 16} { // in version 0, and in version 1 (GP replay)
		t.Run(fmt.Sprint(lines), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
			cmd.Env = append(os.Environ(), childEnv+"="+dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for journalLines(dir) < lines && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()
			killedAt := journalLines(dir)
			if killedAt >= 33 {
				t.Fatalf("the child finished (%d journal lines) before it was killed", killedAt)
			}
			got, err := runToy(t, toyConfig(), dir, true, nil, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("killed after %d journal lines; %d queries resumed", killedAt, got.Resumed)
			sameQueries(t, got.Queries, want.Queries)
			if journalLines(dir) != 33 {
				t.Errorf("journal has %d lines, want 30 queries + 3 versions", journalLines(dir))
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	p, data := newToy(t)
	dir := t.TempDir()
	cfg := toyConfig()
	cfg.Acq = "pi"
	if _, err := bo.Run(cfg, p.Task(), p.Model(), data, bo.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "acq") {
		t.Errorf("acq pi: %v, want an error naming acq", err)
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
	if len(res.Queries) != 6 || len(res.Versions) != 6 {
		t.Fatalf("%d queries in %d versions, want 6 in 6", len(res.Queries), len(res.Versions))
	}
	for i, q := range res.Queries {
		if q.Version != i {
			t.Errorf("query %d in version %d, want %d", i, q.Version, i)
		}
	}
	if n := journalLines(dir); n != 6+6+5 {
		t.Errorf("journal has %d lines, want 6 queries, 6 versions and 5 stops", n)
	}
	// A resumed run that ends on a stop retrains before its next query.
	cfg.Budget = 7
	more, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := more.Queries[6]; q.Version != 6 {
		t.Errorf("query 6 after resuming in version %d, want 6", q.Version)
	}
}

func TestSemiSupervisedWarpedStart(t *testing.T) {
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 12, 0
	cfg.LabelledFraction = 0.1 // 20 of the 200 labelled points
	cfg.Warp = true            // W-LBO
	res, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
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
