package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule"
)

// stdout runs f and returns what it printed on standard output.
func stdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	old := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	runErr := f()
	w.Close()
	os.Stdout = old
	return string(<-done), runErr
}

// pmoRun writes a molecule run directory: initial oracle calls (none when
// nil) and queries (a repeat and a known one among them).
func pmoRun(t *testing.T, dir string, seed int, initial []bo.Evaluation, points []string, scores []float64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"task": "molecule", "maximize": "true", "seed": fmt.Sprint(seed), "strategy": "bo"}
	if initial != nil {
		cfg[bo.InitialCallsField] = fmt.Sprint(len(initial))
		if err := bo.WriteInitial(dir, initial); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	err := numpy.WriteNPZ(filepath.Join(dir, bo.ResultsFile), []numpy.Array{
		{Name: "opt_points", Shape: []int{len(points)}, Data: points},
		{Name: "opt_point_properties", Shape: []int{len(scores)}, Data: scores},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAnalyzePMOInitialAndDiversity: analyze pmo counts a run's initial
// oracle calls first (the AUC of initial calls then distinct evaluations),
// says how many were initial, and prints the molecule task's top-10
// diversity per run and over runs; plot --metric top10 draws the top-10 mean
// against the same calls, the two seeds as one curve.
func TestAnalyzePMOInitialAndDiversity(t *testing.T) {
	root := t.TempDir()
	smi := molecule.SampleSmiles()
	var initial []bo.Evaluation
	for i, s := range smi[:12] {
		initial = append(initial, bo.Evaluation{Object: s, Score: float64(i) / 20})
	}
	points := append(smi[12:20], smi[12]) // the last is a repeat: no call
	scores := []float64{0.9, 0.1, 0.2, 0.3, 0.95, 0.4, 0.5, 0.6, 0.9}
	a := pmoRun(t, filepath.Join(root, "a"), 0, initial, points, scores)
	b := pmoRun(t, filepath.Join(root, "b"), 1, initial, smi[20:32], []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.15, 0.25, 0.35})
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{analyzeCommand(), plotCommand()}}
	out, err := stdout(t, func() error {
		return app.Run([]string{"tlbo-native", "analyze", "pmo", "--run", a, "--run", b, "--budget", "100"})
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := append(initial, bo.Evaluation{})[:12]
	for i, s := range points[:8] {
		calls = append(calls, bo.Evaluation{Object: s, Score: scores[i]})
	}
	y := make([]float64, len(calls))
	for i, e := range calls {
		y[i] = e.Score
	}
	auc, _ := analysis.TopKAUC(y, 10, analysis.PMOEvery, 100)
	var top []string
	for _, e := range analysis.TopEvaluations(calls, 10) {
		top = append(top, e.Object)
	}
	div, err := molecule.Diversity(top)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s  calls 20 (12 initial)  auc_top1 ", a)
	if !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("auc_top10 %.4f", auc)) ||
		!strings.Contains(out, fmt.Sprintf("diversity_top10 %.4f\n", div)) || !strings.Contains(out, b+"  calls 24 (12 initial)  auc_top1") ||
		!strings.Contains(out, "mean of 2 runs (budget 100)") || strings.Count(out, "diversity_top10") != 3 {
		t.Errorf("analyze pmo printed\n%s\nwant %q, auc_top10 %.4f and diversity_top10 %.4f for run a, run b, and the mean",
			out, want, auc, div)
	}
	png := filepath.Join(root, "top10.png")
	out, err = stdout(t, func() error {
		return app.Run([]string{"tlbo-native", "plot", "--metric", "top10", "--out", png, a, b})
	})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 || !strings.Contains(out, "2 seeds, 20-24 oracle calls (12 initial), top-10 mean after 20") {
		t.Errorf("plot --metric top10: %v, printed %q", err, out)
	}
	if err := app.Run([]string{"tlbo-native", "plot", "--metric", "top5", "--out", png, a}); err == nil || !strings.Contains(err.Error(), "top10") {
		t.Errorf("plot --metric top5: %v", err)
	}
}

// TestAnalyzePMORefusesMixedObjectives: analyze pmo does not average runs
// of different objectives (penalised logP with QED), naming both.
func TestAnalyzePMORefusesMixedObjectives(t *testing.T) {
	root := t.TempDir()
	smi := molecule.SampleSmiles()
	a := pmoRun(t, filepath.Join(root, "a"), 0, nil, smi[:3], []float64{0.1, 0.2, 0.3})
	b := pmoRun(t, filepath.Join(root, "b"), 1, nil, smi[3:6], []float64{0.1, 0.2, 0.3})
	for dir, objective := range map[string]string{a: "qed (RDKit's QED, in [0, 1])", b: "penalised logP (...)"} {
		var cfg map[string]string
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, bo.ConfigFile))), &cfg); err != nil {
			t.Fatal(err)
		}
		cfg["objective"] = objective
		buf, _ := json.Marshal(cfg)
		if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{analyzeCommand()}}
	_, err := stdout(t, func() error {
		return app.Run([]string{"tlbo-native", "analyze", "pmo", "--run", a, "--run", b, "--budget", "100"})
	})
	if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "objectives") {
		t.Errorf("analyze pmo over a QED and a penalised-logP run: %v, want an error naming both", err)
	}
}
