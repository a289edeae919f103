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
