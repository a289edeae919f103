package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// fakeRun writes a run directory of three queries (one a repeat) with the
// given configuration.
func fakeRun(t *testing.T, dir string, config map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	err := numpy.WriteNPZ(filepath.Join(dir, bo.ResultsFile), []numpy.Array{
		{Name: "opt_points", Shape: []int{3}, Data: []string{"a", "a", "b"}},
		{Name: "opt_point_properties", Shape: []int{3}, Data: []float64{2, 2, 1}},
		{Name: "opt_known", Shape: []int{3}, Data: []int64{0, 1, 0}},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlotRefusesMixedAxes checks that plot draws runs of one task and
// direction and refuses, naming both runs, a run of another task or
// direction.
func TestPlotRefusesMixedAxes(t *testing.T) {
	root := t.TempDir()
	run := func(args ...string) error {
		app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{plotCommand()}}
		return app.Run(append([]string{"tlbo-native", "plot", "--out", filepath.Join(root, "p.png")}, args...))
	}
	cfg := func(task, maximize, seed string) map[string]string {
		return map[string]string{"task": task, "maximize": maximize, "seed": seed, "strategy": "bo"}
	}
	a := fakeRun(t, filepath.Join(root, "a"), cfg("expression", "false", "0"))
	b := fakeRun(t, filepath.Join(root, "b"), cfg("expression", "false", "0"))
	if err := run(a, b); err != nil {
		t.Fatal(err)
	}
	up := fakeRun(t, filepath.Join(root, "up"), cfg("expression", "true", "1"))
	other := fakeRun(t, filepath.Join(root, "other"), cfg("topology", "false", "1"))
	for _, c := range []struct{ dir, what string }{{up, "directions"}, {other, "tasks"}} {
		err := run(a, c.dir)
		if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("plot %s %s: %v, want an error naming both runs and the different %s", a, c.dir, err, c.what)
		}
	}
}

// TestPlotLabels: --label names the curves in the order of their first runs
// (runs that differ only in the seed are one curve), for both metrics, and a
// count of labels other than the curves' is refused, naming the curves.
func TestPlotLabels(t *testing.T) {
	root := t.TempDir()
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{plotCommand()}}
	plot := func(args ...string) (string, error) {
		return stdout(t, func() error {
			return app.Run(append([]string{"tlbo-native", "plot", "--out", filepath.Join(root, "p.png")}, args...))
		})
	}
	cfg := func(strategy, seed string) map[string]string {
		return map[string]string{"task": "molecule", "maximize": "true", "seed": seed, "strategy": strategy}
	}
	random := fakeRun(t, filepath.Join(root, "random0"), cfg("random", "0"))
	bo0 := fakeRun(t, filepath.Join(root, "bo0"), cfg("bo", "0"))
	bo1 := fakeRun(t, filepath.Join(root, "bo1"), cfg("bo", "1"))
	for _, metric := range []string{"best", "top10"} {
		out, err := plot("--metric", metric, "--label", "screening", "--label", "T-LBO", random, bo0, bo1)
		if err != nil {
			t.Fatalf("--metric %s: %v", metric, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "screening: 1 run,") || !strings.HasPrefix(lines[1], "T-LBO: 2 seeds,") {
			t.Errorf("--metric %s with two labels printed %q, want the random run's curve named screening, then the bo runs' T-LBO", metric, out)
		}
	}
	_, err := plot("--label", "T-LBO", random, bo0, bo1)
	if err == nil || !strings.Contains(err.Error(), "1 --label for 2 curves") || !strings.Contains(err.Error(), `"strategy=random" (1 run)`) {
		t.Errorf("one label for two curves: %v, want it refused naming the curves", err)
	}
}
