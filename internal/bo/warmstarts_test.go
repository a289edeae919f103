package bo_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TestWarmStarts: --warm-starts is validated naming it, recorded in
// config.json, changes the acquisition steps of a round
// after its first (the run's queries are the run's without it up to one
// of those), and a run crashed and resumed
// makes the uninterrupted run's queries (a round is journaled whole).
func TestWarmStarts(t *testing.T) {
	for _, c := range []struct {
		warm    int
		repeats bo.Repeats
	}{{-1, bo.RepeatsSkip}, {3, bo.RepeatsSkip}, {1, bo.RepeatsAuthors}} {
		cfg := toyConfig() // 3 restarts
		cfg.WarmStarts, cfg.Repeats = c.warm, c.repeats
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "warm-starts") {
			t.Errorf("warm-starts %d with repeats %s: %v, want an error naming warm-starts", c.warm, c.repeats, err)
		}
	}

	cold := refitRun(t, refitConfig(bo.GPRefitAuto, bo.RepeatsSkip, 1))
	cfg := refitConfig(bo.GPRefitAuto, bo.RepeatsSkip, 1)
	cfg.WarmStarts = 2
	dir := t.TempDir()
	warm, err := runToy(t, cfg, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := readConfigFile(t, dir); m["warm-starts"] != "2" {
		t.Errorf("config.json records warm-starts %q, want 2", m["warm-starts"])
	}
	// The runs agree up to a round's later acquisition step, and differ
	// from one on.
	n := min(len(warm.Queries), len(cold.Queries))
	first := slices.IndexFunc(warm.Queries[:n], func(q bo.Query) bool { return !slices.Equal(q.Z, cold.Queries[q.Index].Z) })
	if first < 0 {
		t.Fatalf("the runs with and without warm starts made the same %d queries", n)
	}
	if q := warm.Queries[first]; q.Index == q.Round {
		t.Errorf("query %d, the first step of its round, differs with warm starts", first)
	}
	sameQueries(t, warm.Queries[:first], cold.Queries[:first])

	crashed := t.TempDir()
	crashRun(t, cfg, crashed, 5+10+5+4)
	got, err := runToy(t, cfg, crashed, true, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	sameQueries(t, got.Queries, warm.Queries)
}

// TestDefaultWarmStarts: a new run's default keeps a tenth of the
// restarts fresh (at least one) under bo and skip, and is 0 where warm
// starts do not apply; a run whose config.json has no warm-starts (made
// before the default) resumes with 0 and is refused with the default,
// naming warm-starts.
func TestDefaultWarmStarts(t *testing.T) {
	for _, c := range []struct {
		strategy bo.Strategy
		repeats  bo.Repeats
		restarts int
		want     int
	}{{bo.StrategyBO, bo.RepeatsSkip, 100, 90}, {bo.StrategyBO, bo.RepeatsSkip, 25, 23}, {bo.StrategyBO, bo.RepeatsSkip, 3, 2},
		{bo.StrategyBO, bo.RepeatsSkip, 1, 0}, {bo.StrategyBO, bo.RepeatsAuthors, 100, 0}, {bo.StrategyRandom, bo.RepeatsSkip, 100, 0},
		{bo.StrategyPrior, bo.RepeatsSkip, 100, 0}} {
		cfg := toyConfig()
		cfg.Strategy, cfg.Repeats, cfg.Restarts = c.strategy, c.repeats, c.restarts
		got := cfg.DefaultWarmStarts()
		if got != c.want {
			t.Errorf("DefaultWarmStarts of %s, %s, %d restarts = %d, want %d", c.strategy, c.repeats, c.restarts, got, c.want)
		}
		cfg.WarmStarts = got
		if err := cfg.Validate(); err != nil {
			t.Errorf("the default of %s, %s, %d restarts: %v", c.strategy, c.repeats, c.restarts, err)
		}
	}
	if w := bo.DefaultConfig().WarmStarts; w != 0 {
		t.Errorf("DefaultConfig's warm starts %d, want 0 (a configuration built field by field stays cold)", w)
	}

	dir := t.TempDir()
	old := refitConfig(bo.GPRefitAuto, bo.RepeatsSkip, 1) // WarmStarts 0, as before the default
	old.Budget = 12
	if _, err := runToy(t, old, dir, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	if m := readConfigFile(t, dir); m["warm-starts"] != "" {
		t.Fatalf("config.json of a run without warm starts records warm-starts %q, want none", m["warm-starts"])
	}
	now := old
	now.Budget = 14
	now.WarmStarts = now.DefaultWarmStarts()
	_, err := runToy(t, now, dir, true, nil, nil)
	if want := `warm-starts: the run has none, now "2"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resume with the default warm starts: %v, want an error containing %s", err, want)
	}
	now.WarmStarts = 0
	res, err := runToy(t, now, dir, true, nil, nil)
	if err != nil {
		t.Fatalf("resume with warm starts off: %v", err)
	}
	cold, err := runToy(t, now, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameQueries(t, res.Queries, cold.Queries)
}
