package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TestProgramExtremeScore: a program that returns -1e308 once (its
// "failed" sentinel, finite) in a minimised run: the GP goes on fitting
// (no later proposal is random, the fits journal the clamped score), the
// summary and best.png are written, and so they are again on --resume.
func TestProgramExtremeScore(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	script := filepath.Join(dir, "score.sh")
	// The 8th call (the second query, after 6 initial calls) scores
	// -1e308, the others their length.
	text := "#!/bin/sh\nn=$(cat \"$COUNT\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$COUNT\"\n" +
		"if [ $n -eq 8 ]; then echo -1e308; else wc -c <\"$1\"; fi\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNT", filepath.Join(dir, "count"))
	run := filepath.Join(dir, "run")
	args := programRun(t, data, vae, script, run, "--initial", "6", "--failure-score", "1000", "--budget", "6",
		"--retrain-every", "6", "--seed", "1")
	if err := runCLI(args...); err != nil {
		t.Fatal(err)
	}
	queries := journalQueries(t, run)
	sentinel := -1
	for _, q := range queries {
		if q.Score == -1e308 {
			sentinel = q.Index
		}
	}
	if sentinel < 0 || sentinel >= len(queries)-1 {
		t.Fatalf("the sentinel is query %d of %d: want one with queries after it", sentinel, len(queries))
	}
	clamped := false
	for _, q := range queries[sentinel+1:] {
		if q.Random {
			t.Errorf("query %d is random: %s", q.Index+1, q.RandomReason)
		}
		clamped = clamped || (q.GP != nil && q.GP.Clamped > 0)
	}
	if !clamped {
		t.Error("no fit after the sentinel journals a clamped target")
	}
	if err := os.Remove(filepath.Join(run, "best.png")); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(args, "--resume")...); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if st, err := os.Stat(filepath.Join(run, "best.png")); err != nil || st.Size() == 0 {
		t.Errorf("best.png after the resume: %v", err)
	}
	if err := runCLI("plot", "--out", filepath.Join(dir, "p.png"), run); err != nil {
		t.Errorf("plot: %v", err)
	}
}

// journalQueries returns the queries of a run's journal (its round
// records' proposals with their evaluations' scores), by index.
func journalQueries(t *testing.T, run string) []bo.Query {
	t.Helper()
	var out []bo.Query
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(run, bo.JournalFile))), "\n") {
		var r struct {
			Round *struct{ Queries []bo.Query }
			Eval  *bo.Eval
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Round != nil {
			out = append(out, r.Round.Queries...)
		}
		if r.Eval != nil {
			for i := range out {
				if out[i].Index == r.Eval.Index {
					out[i].Score = r.Eval.Score
				}
			}
		}
	}
	return out
}

// TestPrintRandom: the summary counts the queries whose point was random,
// with their reasons (one from a journal before the reasons were kept),
// and says nothing when there are none.
func TestPrintRandom(t *testing.T) {
	res := &bo.Result{Queries: []bo.Query{
		{Random: true, RandomReason: "GP fit failed: gp: target 0 is NaN"},
		{},
		{Random: true, RandomReason: "GP fit failed: gp: target 0 is NaN"},
		{Random: true},
	}}
	out, _ := stdout(t, func() error { printRandom(res); return nil })
	for _, want := range []string{"warning: 3 of 4 queries were random points", "2 x GP fit failed: gp: target 0 is NaN",
		"1 x reason not journaled"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary %q lacks %q", out, want)
		}
	}
	if out, _ := stdout(t, func() error { printRandom(&bo.Result{Queries: []bo.Query{{}}}); return nil }); out != "" {
		t.Errorf("no random query, yet the summary says %q", out)
	}
}
