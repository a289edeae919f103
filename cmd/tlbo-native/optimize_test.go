package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func runBO(args ...string) error {
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{optimizeCommand(), plotCommand()}}
	return app.Run(append([]string{"tlbo-native"}, args...))
}

func TestOptimizeToyAndPlot(t *testing.T) {
	dir := t.TempDir()
	toy := []string{"optimize", "--task", "toy", "--budget", "6", "--retrain-every", "3", "--n-best", "30",
		"--n-rand", "10", "--inducing", "0", "--raw-samples", "64", "--restarts", "2"}
	for _, seed := range []string{"1", "2"} {
		if err := runBO(append(toy, "--seed", seed, "--run-dir", filepath.Join(dir, "bo"+seed))...); err != nil {
			t.Fatal(err)
		}
	}
	if err := runBO(append(toy, "--strategy", "random", "--run-dir", filepath.Join(dir, "rs"))...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bo1/best.png", "bo1/results.npz", "bo1/journal.jsonl", "bo1/config.json", "bo1/model-v1/model.pt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	out := filepath.Join(dir, "all.png")
	if err := runBO("plot", "--out", out, filepath.Join(dir, "bo1"), filepath.Join(dir, "bo2"), filepath.Join(dir, "rs")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	// Resuming with another k is refused, naming it.
	err := runBO(append(toy, "--seed", "1", "--k", "0.1", "--resume", "--run-dir", filepath.Join(dir, "bo1"))...)
	if err == nil || !strings.Contains(err.Error(), `k: the run has "0.001", now "0.1"`) {
		t.Errorf("resume with another k: %v", err)
	}
	if err := runBO("optimize", "--task", "toy", "--k", "many", "--run-dir", dir); err == nil || !strings.Contains(err.Error(), "--k") {
		t.Errorf("--k many: %v, want an error naming --k", err)
	}
	if err := runBO("plot", "--out", out, filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("plot of a missing run: %v", err)
	}
}
