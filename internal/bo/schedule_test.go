package bo_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// fits counts the GP steps of a run's queries (a step per query of the
// authors' loop, per round under RepeatsSkip), those that fitted the GP
// (with a fit's record) and those that kept the GP of an earlier fit.
func fits(qs []bo.Query) (steps, fitted, kept int) {
	for _, q := range qs {
		if q.Round == q.Index {
			steps++
		}
		if q.GP != nil {
			fitted++
		}
		if q.GPKept {
			kept++
		}
	}
	return steps, fitted, kept
}

// refitConfig is the toy configuration under a GP schedule; q > 1 makes
// rounds of q proposals, so that some rounds keep the GP with points added
// by the believer before any refit.
func refitConfig(refit bo.GPRefit, repeats bo.Repeats, q int) bo.Config {
	cfg := toyConfig()
	cfg.GPRefit, cfg.Repeats, cfg.Q = refit, repeats, q
	return cfg
}

// refitReference memoises the uninterrupted runs of refitConfig.
var refitReference = map[string]*bo.Result{}

func refitRun(t *testing.T, cfg bo.Config) *bo.Result {
	t.Helper()
	key := fmt.Sprintf("%s/%s/%d/%s", cfg.GPRefit, cfg.Repeats, cfg.Q, cfg.GPInducing)
	if res, ok := refitReference[key]; ok {
		return res
	}
	res, err := runToy(t, cfg, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	refitReference[key] = res
	return res
}

// TestGPRefitSchedules: under --gp-refit 5 and auto a run spends its
// budget with fewer GP fits than under every: a fit at each version's
// start, then under 5 one for every 5 points added, the queries in between
// keeping the GP (GPKept, no GP record, but their conditioning's time);
// and the runs differ from the every run after the first kept query.
func TestGPRefitSchedules(t *testing.T) {
	every := reference(t)
	steps, nEvery, keptEvery := fits(every.Queries)
	if keptEvery != 0 || nEvery != steps {
		t.Fatalf("every: %d fits and %d kept GPs in %d rounds, want a fit each", nEvery, keptEvery, steps)
	}
	for _, refit := range []bo.GPRefit{"5", bo.GPRefitAuto} {
		t.Run(string(refit), func(t *testing.T) {
			res := refitRun(t, refitConfig(refit, bo.RepeatsSkip, 1))
			if res.Evaluated != 30 || len(res.Versions) != 3 {
				t.Fatalf("%d evaluations in %d versions, want 30 in 3", res.Evaluated, len(res.Versions))
			}
			steps, n, kept := fits(res.Queries)
			t.Logf("%d queries in %d rounds: %d GP fits, %d kept (every: %d fits); best %.4f (every %.4f)",
				len(res.Queries), steps, n, kept, nEvery, res.Best, every.Best)
			if n >= nEvery || n+kept != steps {
				t.Errorf("%d fits and %d kept GPs in %d rounds; want fewer fits than every's %d, one or the other per round",
					n, kept, steps, nEvery)
			}
			since := 0 // evaluations since the last fit
			for i, q := range res.Queries {
				if q.Round == q.Index {
					first := i == 0 || q.Version != res.Queries[i-1].Version
					switch {
					case first && q.GP == nil:
						t.Errorf("query %d starts version %d without a fit", i, q.Version)
					case q.GP == nil && q.Timing.GPFit <= 0:
						t.Errorf("query %d kept the GP without timing its conditioning", i)
					case q.GP != nil && q.GPKept:
						t.Errorf("query %d both fitted and kept the GP", i)
					case refit == "5" && !first && (q.GP != nil) != (since >= 5):
						t.Errorf("round %d: fitted %v after %d evaluations since the last fit, want a fit from 5 on", i, q.GP != nil, since)
					}
					if q.GP != nil {
						since = 0
					}
				}
				if q.Valid && !q.Known {
					since++
				}
			}
			if !(res.Best < res.InitialBest) {
				t.Errorf("best %.4f does not improve on the start %.4f", res.Best, res.InitialBest)
			}
		})
	}
}

// TestGPRefitResume: a run under --gp-refit 5 or auto crashed between two
// fits (and at a version's first fit) resumes to the uninterrupted run's
// queries, with GPWarmFile (no fit replayed) and without it (the version's
// fits replayed), for the rounds of q = 1 and q = 4 and the authors' loop,
// with the inducing points fixed or growing between fits.
func TestGPRefitResume(t *testing.T) {
	for _, c := range []struct {
		refit    bo.GPRefit
		repeats  bo.Repeats
		q        int
		inducing bo.GPInducing
		at       []int // evaluations at which the run crashes (5 prior samples a version first)
	}{
		{"5", bo.RepeatsSkip, 1, bo.GPInducingFixed, []int{5 + 1, 5 + 3, 5 + 10 + 5 + 8}},
		{bo.GPRefitAuto, bo.RepeatsSkip, 1, bo.GPInducingFixed, []int{5 + 4, 5 + 10 + 5 + 7}},
		{"5", bo.RepeatsSkip, 4, bo.GPInducingFixed, []int{5 + 6, 5 + 10 + 5 + 3}},
		{"5", bo.RepeatsAuthors, 1, bo.GPInducingFixed, []int{5 + 3, 5 + 10 + 5 + 9}},
		{bo.GPRefitAuto, bo.RepeatsSkip, 1, bo.GPInducingGrow, []int{5 + 4, 5 + 10 + 5 + 7}},
		{"5", bo.RepeatsSkip, 4, bo.GPInducingGrow, []int{5 + 6, 5 + 10 + 5 + 3}},
	} {
		cfg := refitConfig(c.refit, c.repeats, c.q)
		cfg.GPInducing = c.inducing
		for _, at := range c.at {
			for _, keep := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/q%d/%s/at%d/warm-file-%v", c.refit, c.repeats, c.q, c.inducing, at, keep), func(t *testing.T) {
					want := refitRun(t, cfg)
					dir := t.TempDir()
					crashRun(t, cfg, dir, at)
					journal := readJournalQueries(t, dir)
					if _, n, kept := fits(journal); kept == 0 && at > 5+5 {
						t.Errorf("the crashed run kept no GP in %d queries (%d fits): the crash is not between fits", len(journal), n)
					}
					if !keep {
						os.Remove(filepath.Join(dir, bo.GPWarmFile))
					}
					got, err := runToy(t, cfg, dir, true, nil, t.Logf)
					if err != nil {
						t.Fatal(err)
					}
					// The resume goes on in the last journaled version, and
					// replays its fits without the file, unless that version
					// had spent its queries (the crash came in the next one's
					// prior samples).
					inVersion := 0
					for _, q := range journal {
						if q.Version == journal[len(journal)-1].Version && (c.repeats == bo.RepeatsAuthors || q.Valid && !q.Known) {
							inVersion++
						}
					}
					if replayed := got.ReplayedFits > 0; replayed == keep && inVersion < cfg.RetrainEvery {
						t.Errorf("replayed %d GP fits with %s kept %v", got.ReplayedFits, bo.GPWarmFile, keep)
					}
					sameQueries(t, got.Queries, want.Queries)
				})
			}
		}
	}
}

// readJournalQueries returns the queries journaled in dir (those of
// rounds included, evaluated or not).
func readJournalQueries(t *testing.T, dir string) []bo.Query {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	var qs []bo.Query
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Query *bo.Query
			Round *bo.Round
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Query != nil {
			qs = append(qs, *rec.Query)
		}
		if rec.Round != nil {
			qs = append(qs, rec.Round.Queries...)
		}
	}
	return qs
}

// TestGPRefitConfig: the schedule is parsed and validated naming the flag
// or field, recorded in config.json as gp-refit, a run whose config.json
// predates it resumes as every, and a resume with another schedule is
// refused naming both.
func TestGPRefitConfig(t *testing.T) {
	for _, s := range []string{"every", "auto", "1", "25"} {
		if g, err := bo.ParseGPRefit(s); err != nil || string(g) != s {
			t.Errorf("ParseGPRefit(%q) = %q, %v", s, g, err)
		}
	}
	for _, s := range []string{"", "0", "-3", "05", "2.5", "always"} {
		if _, err := bo.ParseGPRefit(s); err == nil || !strings.Contains(err.Error(), "--gp-refit") {
			t.Errorf("ParseGPRefit(%q): %v, want an error naming --gp-refit", s, err)
		}
		cfg := toyConfig()
		cfg.GPRefit = bo.GPRefit(s)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "gp-refit") {
			t.Errorf("config with gp-refit %q: %v, want an error naming gp-refit", s, err)
		}
	}

	dir := t.TempDir()
	cfg := toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 2, 0
	if _, err := runToy(t, cfg, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	m := readConfigFile(t, dir)
	if m["gp-refit"] != "every" {
		t.Fatalf("config.json records gp-refit %q, want every", m["gp-refit"])
	}
	other := cfg
	other.GPRefit, other.Budget = "10", 3
	_, err := runToy(t, other, dir, true, nil, nil)
	if want := `gp-refit: the run has "every", now "10"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resume with another schedule: %v, want an error containing %s", err, want)
	}
	delete(m, "gp-refit") // a run made before the setting
	writeConfigFile(t, dir, m)
	cfg.Budget = 3
	res, err := runToy(t, cfg, dir, true, nil, nil)
	if err != nil {
		t.Fatalf("resume of a run from before gp-refit as every: %v", err)
	}
	if res.Resumed != 2 || len(res.Queries) != 3 {
		t.Errorf("resumed %d queries and ended with %d, want 2 and 3", res.Resumed, len(res.Queries))
	}
}

// TestGPIters: --gp-iters bounds each model version's fit from scratch,
// not the warm refits after it; config.json records it, a resume with
// another value is refused, and a run made before the setting resumes at
// the authors' 200.
func TestGPIters(t *testing.T) {
	cfg := toyConfig()
	cfg.GPIters = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "gp-iters") {
		t.Errorf("gp-iters 0: %v, want an error naming gp-iters", err)
	}
	full := reference(t)
	cfg.GPIters = 2
	dir := t.TempDir()
	capped, err := runToy(t, cfg, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	scratch, warm := 0, 0
	for i, q := range capped.Queries {
		switch {
		case q.GP == nil:
		case !q.GP.Warm && q.GP.Iterations > 2:
			t.Errorf("query %d: a fit from scratch of %d iterations, want at most 2", i, q.GP.Iterations)
		case !q.GP.Warm:
			scratch++
		case q.GP.Iterations > 2:
			warm++
		}
	}
	if scratch != len(capped.Versions) || warm == 0 {
		t.Errorf("%d capped fits from scratch in %d versions and %d warm refits beyond 2 iterations; want one a version and some",
			scratch, len(capped.Versions), warm)
	}
	longer := 0
	for _, q := range full.Queries {
		if q.GP != nil && !q.GP.Warm && q.GP.Iterations > 2 {
			longer++
		}
	}
	if longer == 0 {
		t.Error("the uncapped run's fits from scratch take at most 2 iterations: the test shows nothing")
	}
	m := readConfigFile(t, dir)
	if m["gp-iters"] != "2" {
		t.Errorf("config.json records gp-iters %q, want 2", m["gp-iters"])
	}
	other := cfg
	other.GPIters, other.Budget = 200, cfg.Budget+1
	if _, err := runToy(t, other, dir, true, nil, nil); err == nil || !strings.Contains(err.Error(), `gp-iters: the run has "2", now "200"`) {
		t.Errorf("resume with another gp-iters: %v, want it refused", err)
	}

	cfg = toyConfig()
	cfg.Budget, cfg.SamplesPerModel = 2, 0
	dir = t.TempDir()
	if _, err := runToy(t, cfg, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	m = readConfigFile(t, dir)
	delete(m, "gp-iters") // a run made before the setting
	writeConfigFile(t, dir, m)
	cfg.Budget = 3
	if _, err := runToy(t, cfg, dir, true, nil, nil); err != nil {
		t.Errorf("resume of a run from before gp-iters at 200: %v", err)
	}
}

// TestGPInducing: --gp-inducing is validated naming the field (grow with
// the every schedule or the FITC objective is refused), recorded in
// config.json, refused at a resume with the other value, and a run from
// before the setting resumes with fixed; growing the inducing points
// changes the proposals of auto and of a numeric schedule, for q = 1 and
// rounds of q = 4, and the run says it grows them.
func TestGPInducing(t *testing.T) {
	for _, c := range []struct {
		inducing bo.GPInducing
		refit    bo.GPRefit
		fitc     bool
		want     string
	}{
		{"sometimes", bo.GPRefitAuto, false, `gp-inducing is "sometimes"`},
		{"", bo.GPRefitAuto, false, `gp-inducing is ""`},
		{bo.GPInducingGrow, bo.GPRefitEvery, false, `under gp-refit "every"`},
		{bo.GPInducingGrow, bo.GPRefitAuto, true, `under gp-objective "fitc"`},
	} {
		cfg := refitConfig(c.refit, bo.RepeatsSkip, 1)
		cfg.GPInducing = c.inducing
		if c.fitc {
			cfg.GPObjective = "fitc"
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gp-inducing %q, gp-refit %s, fitc %v: %v, want an error containing %s", c.inducing, c.refit, c.fitc, err, c.want)
		}
	}
	if _, err := bo.ParseGPInducing("grown"); err == nil || !strings.Contains(err.Error(), "--gp-inducing") {
		t.Errorf("ParseGPInducing(grown): %v, want an error naming --gp-inducing", err)
	}

	for _, c := range []struct {
		refit bo.GPRefit
		q     int
	}{{bo.GPRefitAuto, 1}, {"5", 4}} {
		fixed := refitRun(t, refitConfig(c.refit, bo.RepeatsSkip, c.q))
		cfg := refitConfig(c.refit, bo.RepeatsSkip, c.q)
		cfg.GPInducing = bo.GPInducingGrow
		var lines []string
		logf := func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
		dir := t.TempDir()
		grown, err := runToy(t, cfg, dir, false, nil, logf)
		if err != nil {
			t.Fatal(err)
		}
		if grown.Evaluated != cfg.Budget {
			t.Errorf("%s/q%d: %d evaluations, want %d", c.refit, c.q, grown.Evaluated, cfg.Budget)
		}
		differ := len(grown.Queries) != len(fixed.Queries)
		for i := 0; !differ && i < len(grown.Queries); i++ {
			differ = !slices.Equal(grown.Queries[i].Z, fixed.Queries[i].Z)
		}
		if !differ {
			t.Errorf("%s/q%d: growing the inducing points changed no query", c.refit, c.q)
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "(--gp-inducing grow)") }) {
			t.Errorf("%s/q%d: the log does not say that the inducing points grow: %q", c.refit, c.q, lines)
		}
		m := readConfigFile(t, dir)
		if m["gp-inducing"] != "grow" {
			t.Errorf("config.json records gp-inducing %q, want grow", m["gp-inducing"])
		}
		other := cfg
		other.GPInducing, other.Budget = bo.GPInducingFixed, cfg.Budget+1
		if _, err := runToy(t, other, dir, true, nil, nil); err == nil || !strings.Contains(err.Error(), `gp-inducing: the run has "grow", now "fixed"`) {
			t.Errorf("resume with gp-inducing fixed: %v, want it refused", err)
		}
	}

	cfg := refitConfig(bo.GPRefitAuto, bo.RepeatsSkip, 1)
	cfg.Budget, cfg.SamplesPerModel = 2, 0
	dir := t.TempDir()
	if _, err := runToy(t, cfg, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	m := readConfigFile(t, dir)
	if m["gp-inducing"] != "fixed" {
		t.Errorf("config.json records gp-inducing %q by default, want fixed", m["gp-inducing"])
	}
	delete(m, "gp-inducing") // a run made before the setting
	writeConfigFile(t, dir, m)
	cfg.Budget = 3
	if _, err := runToy(t, cfg, dir, true, nil, nil); err != nil {
		t.Errorf("resume of a run from before gp-inducing as fixed: %v", err)
	}
}

// TestGPRefitLogged: a BO run's log says when its GP is fitted, under
// each schedule, with its iterations from scratch, once: not again when it
// is resumed.
func TestGPRefitLogged(t *testing.T) {
	for refit, want := range map[bo.GPRefit]string{bo.GPRefitEvery: "at every query or round (--gp-refit every",
		bo.GPRefitAuto: "only when the points added since its fit are not predicted as it says (--gp-refit auto)",
		"7":            "every 7 evaluations (--gp-refit 7)"} {
		cfg := toyConfig()
		cfg.GPRefit, cfg.GPIters, cfg.Budget, cfg.SamplesPerModel = refit, 30, 1, 0
		var lines []string
		logf := func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
		dir := t.TempDir()
		if _, err := runToy(t, cfg, dir, false, nil, logf); err != nil {
			t.Fatal(err)
		}
		said := func(l string) bool { return strings.Contains(l, want) && strings.Contains(l, "up to 30 iterations") }
		if !slices.ContainsFunc(lines, said) {
			t.Errorf("--gp-refit %s: the log says %q, want a line with %q and the 30 iterations", refit, lines, want)
		}
		lines, cfg.Budget = nil, 2
		if _, err := runToy(t, cfg, dir, true, nil, logf); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(lines, said) {
			t.Errorf("--gp-refit %s: a resume says it again: %q", refit, lines)
		}
	}
}

const keptChildEnv = "BO_TEST_KILL_KEPT_CHILD_DIR"

// TestKillKeptChild is the child process of TestKillAndResumeKeptGP.
func TestKillKeptChild(t *testing.T) {
	dir := os.Getenv(keptChildEnv)
	if dir == "" {
		t.Skip("child of TestKillAndResumeKeptGP only")
	}
	p, _ := newToy(t)
	if _, err := runToy(t, refitConfig("5", bo.RepeatsSkip, 1), dir, false, slowTask{p.Task()}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestKillAndResumeKeptGP kills (SIGKILL) a run under --gp-refit 5 between
// two fits, in version 0 and in version 1, and resumes it: the queries are
// those of the uninterrupted run.
func TestKillAndResumeKeptGP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cfg := refitConfig("5", bo.RepeatsSkip, 1)
	want := refitRun(t, cfg)
	for _, lines := range []int{9, 28} { // rounds kept since a fit, in versions 0 and 1
		t.Run(fmt.Sprint(lines), func(t *testing.T) {
			dir := t.TempDir()
			killedAt := killChildAt(t, "TestKillKeptChild", keptChildEnv, dir, lines)
			journal := readJournalQueries(t, dir)
			if last := journal[len(journal)-1]; !journal[last.Round-journal[0].Index].GPKept {
				t.Errorf("the last round journaled before the kill (query %d) fitted the GP: the kill was not between fits", last.Round)
			}
			got, err := runToy(t, cfg, dir, true, nil, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("killed after %d journal lines; %d queries resumed, %d fits replayed", killedAt, got.Resumed, got.ReplayedFits)
			sameQueries(t, got.Queries, want.Queries)
		})
	}
}
