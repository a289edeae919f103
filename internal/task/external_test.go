package task

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/external"
	"github.com/tlbo-native/tlbo-native/internal/external/slurmtest"
)

// lenObjective is a built-in objective of string objects: their length,
// minimised, failure score 100.
type lenObjective struct{}

func (lenObjective) Score(s string) (float64, error) { return float64(len(s)), nil }
func (lenObjective) FailureScore() float64           { return 100 }
func (lenObjective) Deterministic() bool             { return true }
func (lenObjective) Maximize() bool                  { return false }
func (lenObjective) Key(s string) string             { return strings.TrimSpace(s) }
func (lenObjective) Parse(k string) (string, error)  { return k, nil }
func (lenObjective) Describe() map[string]string     { return map[string]string{"objective": "length"} }

// TestExternalObjective: a program (awk over the JSON protocol, no shell
// between the object and it) replaces the built-in objective; keys and
// parsing stay the task's, the direction and failure score are the
// request's, and the failure score is required (the task's is on its
// built-in objective's scale, not necessarily the program's).
func TestExternalObjective(t *testing.T) {
	d := &Defined[string, struct{}]{s: Spec[string, struct{}]{Name: "toy"}}
	env := &Env{}
	// The test scorer of internal/external: an object scores its length.
	prog := "/usr/bin/python3 ../external/testdata/scorer.py"
	worst := 1000.0
	e, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: prog, Evaluators: 2, FailureScore: &worst})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.Score("C#N")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Score("C#N(Cl)[O-]%10")
	if err != nil || !(b > a) {
		t.Errorf("scores %v, %v (%v); want the longer object to score more", a, b, err)
	}
	if e.Maximize() || e.FailureScore() != worst || e.Key(" x ") != "x" || !e.Deterministic() ||
		e.Describe()["objective"] != CommandPrefix+prog || e.Describe()["objective-failure-score"] != "1000" {
		t.Errorf("direction %v, failure %v, key %q, deterministic %v, description %v: want the task's direction and key, "+
			"the request's failure score, and the program recorded",
			e.Maximize(), e.FailureScore(), e.Key(" x "), e.Deterministic(), e.Describe())
	}
	for _, dir := range []string{"", "maximize"} {
		_, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: "true", Direction: dir})
		if err == nil || !strings.Contains(err.Error(), "give --failure-score") || !strings.Contains(err.Error(), "QED is in [0, 1]") {
			t.Errorf("direction %q without a failure score: %v, want an error asking for --failure-score and saying why", dir, err)
		}
	}
	f := -1.0
	m, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: "sh -c 'exit 3'", Direction: "maximize",
		FailureScore: &f, Stochastic: true, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.Score("CCO")
	var fail *external.Failure
	if !m.Maximize() || m.FailureScore() != -1 || m.Deterministic() || !errors.As(err, &fail) {
		t.Errorf("maximize %v failure %v deterministic %v error %v; want the request's and a crash failure", m.Maximize(), m.FailureScore(),
			m.Deterministic(), err)
	}
	if _, err := d.newExternalObjective(env, filepath.Join(t.TempDir(), "x"), lenObjective{}, ExternalRequest{Command: "true", Executor: "cloud",
		FailureScore: &worst}); err == nil {
		t.Error("an unknown executor was accepted")
	}
}

// hardObjects are objects full of shell syntax, escapes, quotes and blanks.
var hardObjects = []string{
	`C#N`, `CC(=O)Oc1ccccc1C(=O)O`, `[NH4+].[Cl-]`, `C1CC%10CC1`, `F/C=C\F`, `x * (2 + sin( x ))`,
	`it's "quoted"`, "tab\there", `$(id) ; rm -rf / && echo $HOME`, `back\\slash \n not a newline`, `* ? [a-z] ~ {a,b} | > <`,
}

// TestExternalObjectsIntact sends the objects through the program
// objective on both executors, as optimize builds them (the program on this
// machine, and Slurm job arrays under the run directory), and checks that
// the program received each unchanged. The Slurm half needs a cluster (the
// one of testdata/slurm/start.sh, which ./build.sh test starts); only
// TLBO_SKIP_SLURM=1 skips it.
func TestExternalObjectsIntact(t *testing.T) {
	d := &Defined[string, struct{}]{s: Spec[string, struct{}]{Name: "toy"}}
	prog := "/usr/bin/python3 ../external/testdata/scorer.py"
	for _, executor := range []string{ExecutorLocal, ExecutorSlurm} {
		t.Run(executor, func(t *testing.T) {
			if executor == ExecutorSlurm {
				slurmtest.Need(t)
			}
			log := filepath.Join(t.TempDir(), "log")
			t.Setenv("SCORER_LOG", log)
			worst := 1000.0
			e, err := d.newExternalObjective(&Env{}, t.TempDir(), lenObjective{},
				ExternalRequest{Command: prog, Executor: executor, Evaluators: 3, Timeout: 5 * time.Minute, FailureScore: &worst})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var wg sync.WaitGroup
			for _, o := range hardObjects {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if s, err := e.Score(o); err != nil || s != float64(utf8.RuneCountInString(o)) {
						t.Errorf("Score(%q) = %v, %v; want its length", o, s, err)
					}
				}()
			}
			wg.Wait()
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var s string
				if err := json.Unmarshal([]byte(l), &s); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				got = append(got, s)
			}
			want := slices.Clone(hardObjects)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the program received %q, want %q", got, want)
			}
		})
	}
}

// oneObjectModel decodes every latent point to the object "x": every
// proposal of a run repeats the first.
type oneObjectModel struct{}

func (oneObjectModel) LatentDim() int         { return 2 }
func (oneObjectModel) Accept(string) error    { return nil }
func (oneObjectModel) Save(path string) error { return os.WriteFile(path, nil, 0o644) }
func (oneObjectModel) Load(string) error      { return nil }
func (oneObjectModel) Encode(objs []string) (*mat.Dense, error) {
	return mat.NewDense(len(objs), 2, nil), nil
}
func (oneObjectModel) Decode(z *mat.Dense, _ uint64) ([]string, []bool, error) {
	n, _ := z.Dims()
	objs, valid := make([]string, n), make([]bool, n)
	for i := range objs {
		objs[i], valid[i] = "x", true
	}
	return objs, valid, nil
}
func (oneObjectModel) Retrain(bo.RetrainRequest[string]) (map[string]float64, error) { return nil, nil }

// TestStochasticRepeatAfterResume: with a stochastic program objective, a
// run that evaluated an object, stopped and was resumed evaluates the same
// object again when a later query proposes it, and that query gets the new
// evaluation's score. On Slurm the resumed run re-attaches to the journaled
// job arrays, including the one whose result the first run already used:
// that result belongs to query 0 and must not become query 1's.
func TestStochasticRepeatAfterResume(t *testing.T) {
	d := &Defined[string, struct{}]{s: Spec[string, struct{}]{Name: "toy"}}
	for _, executor := range []string{ExecutorLocal, ExecutorSlurm} {
		t.Run(executor, func(t *testing.T) {
			if executor == ExecutorSlurm {
				slurmtest.Need(t)
			}
			tmp := t.TempDir()
			count := filepath.Join(tmp, "calls")
			// The program's score is the number of calls so far: each
			// evaluation's own.
			script := filepath.Join(tmp, "count.sh")
			prog := "#!/bin/sh\nwhile read -r line; do\n" +
				"id=$(printf '%s\\n' \"$line\" | sed 's/.*\"id\": *\\([0-9]*\\).*/\\1/')\n" +
				"echo call >>" + count + "\n" +
				"echo \"{\\\"id\\\": $id, \\\"score\\\": $(wc -l <" + count + ")}\"\ndone\n"
			if err := os.WriteFile(script, []byte(prog), 0o755); err != nil {
				t.Fatal(err)
			}
			run := filepath.Join(tmp, "run")
			data := bo.Data[string]{Objects: []string{"p", "q"}, Scores: []float64{50, 60}}
			cfg := bo.DefaultConfig()
			cfg.Strategy, cfg.RetrainEvery, cfg.RankK, cfg.Seed = bo.StrategyPrior, 10, 1e-3, 1
			cfg.NBest, cfg.NRand, cfg.Inducing = 2, 0, 2
			calls := func() int {
				b, _ := os.ReadFile(count)
				return strings.Count(string(b), "\n")
			}
			for budget := 1; budget <= 2; budget++ {
				worst := 1000.0
				e, err := d.newExternalObjective(&Env{}, run, lenObjective{}, ExternalRequest{Command: script, Executor: executor,
					Stochastic: true, Evaluators: 1, Timeout: 5 * time.Minute, FailureScore: &worst})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Budget = budget
				res, err := bo.Run[string](cfg, e, oneObjectModel{}, data, bo.Options{Dir: run, Resume: budget > 1, Logf: t.Logf})
				e.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Queries) != budget {
					t.Fatalf("budget %d: %d queries", budget, len(res.Queries))
				}
				for i, q := range res.Queries {
					if q.Object != "x" || q.Failure != "" || q.Score != float64(i+1) {
						t.Errorf("budget %d: query %d = %q scored %v (%s); want x scored %d, its own call's", budget, i, q.Object, q.Score,
							q.Failure, i+1)
					}
				}
				if n := calls(); n != budget {
					t.Errorf("budget %d: the program was called %d times, want once per query (a stochastic repeat evaluated again)",
						budget, n)
				}
			}
		})
	}
}

// TestExternalFailFast: the program objective stops the run (bo.Halt)
// when its program is broken: one that cannot be started at its first
// evaluation, nothing journaled (no Failure); one that always exits 1 at
// the third failure, that failure journaled (its Failure) and later
// evaluations not run; and, the run's context done, every evaluation.
// Each error names the program, the reason with its standard error, and
// what to do.
func TestExternalFailFast(t *testing.T) {
	d := &Defined[string, struct{}]{s: Spec[string, struct{}]{Name: "toy"}}
	worst := 1000.0
	newObjective := func(env *Env, cmd string) *externalObjective[string] {
		t.Helper()
		e, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: cmd, FailureScore: &worst,
			Retries: -1, FailFast: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	halt := func(err error) *bo.Halt {
		var h *bo.Halt
		if !errors.As(err, &h) {
			return nil
		}
		return h
	}
	words := func(err error, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
	}

	missing := filepath.Join(t.TempDir(), "missing.sh")
	s, err := newObjective(&Env{}, missing+" --x").Score("C")
	if h := halt(err); h == nil || h.Failure != "" || s != worst {
		t.Fatalf("a program that does not exist: %v, %v; want a Halt without a failure", s, err)
	}
	words(err, "cannot be started", missing, "no such file", "--resume")

	count := filepath.Join(t.TempDir(), "count")
	e := newObjective(&Env{}, "sh -c 'read -r line; echo call >>"+count+"; echo \"scorer: cannot load model.bin\" >&2; exit 1'")
	for i := 1; i <= 4; i++ {
		_, err := e.Score("C")
		h := halt(err)
		switch {
		case i < 3 && (h != nil || external.FailureKind(err) != external.FailCrash):
			t.Errorf("failure %d: %v, want the object's failure", i, err)
		case i == 3 && (h == nil || !strings.Contains(h.Failure, "exit status 1")):
			t.Fatalf("failure 3: %v, want a Halt carrying the failure to journal", err)
		case i == 3:
			words(err, "sh -c", "first 3 evaluations", "exit status 1", "cannot load model.bin", "--resume", "--fail-fast",
				"count as made")
		case i == 4 && (h == nil || h.Failure != ""):
			t.Errorf("an evaluation after the stop: %v, want a Halt without a failure", err)
		}
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "call") != 3 {
		t.Errorf("the program ran %d times, want 3 (none after the stop)", strings.Count(string(b), "call"))
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := errors.New("stopped by SIGTERM")
	cancel(stopped)
	_, err = newObjective(&Env{Ctx: ctx}, "sh -c 'echo call >>"+count+"'").Score("C")
	if h := halt(err); h == nil || h.Failure != "" || !errors.Is(err, stopped) {
		t.Errorf("Score with the run's context done: %v, want a Halt with its cause", err)
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "call") != 3 {
		t.Error("the program ran with the run's context done")
	}
}
