package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot/vg"

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
	target := cfg("expression", "false", "1")
	target["target"] = "sin(x)"
	otherTarget := fakeRun(t, filepath.Join(root, "target"), target)
	for _, c := range []struct{ dir, what string }{{up, "directions"}, {other, "tasks"}, {otherTarget, "objectives"}} {
		err := run(a, c.dir)
		if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("plot %s %s: %v, want an error naming both runs and the different %s", a, c.dir, err, c.what)
		}
	}
	// Two molecule objectives are refused; one topology target read from
	// two paths (one target-key) is one objective.
	mol := func(dir, objective string) string {
		c := cfg("molecule", "true", dir)
		c["objective"] = objective
		return fakeRun(t, filepath.Join(root, dir), c)
	}
	plogp, qed := mol("plogp", "penalised logP (...)"), mol("qed", "qed (RDKit's QED, in [0, 1])")
	if err := run(plogp, qed); err == nil || !strings.Contains(err.Error(), "objective=qed") || !strings.Contains(err.Error(), "objectives") {
		t.Errorf("plot of a penalised-logP and a QED run: %v, want an error naming both objectives", err)
	}
	topo := func(dir, path string) string {
		c := cfg("topology", "true", dir)
		c["target"], c["target-key"] = path, "abc123"
		return fakeRun(t, filepath.Join(root, dir), c)
	}
	if err := run(topo("t1", "/data/a.npz#7"), topo("t2", "/elsewhere/a.npz#7")); err != nil {
		t.Errorf("one topology target read from two paths: %v", err)
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

// curveGroup is a group of runs (two give a band) whose mean best score is f
// at 0..n-1 distinct evaluations, with standard deviation sd.
func curveGroup(name string, maximize bool, runs, n int, sd float64, f func(x float64) float64) bo.Group {
	g := bo.Group{Label: name, Mean: make([]float64, n), Std: make([]float64, n)}
	for i := range n {
		g.Mean[i], g.Std[i] = f(float64(i)), sd
	}
	for range runs {
		g.Runs = append(g.Runs, bo.Curve{Maximize: maximize, Best: g.Mean})
	}
	return g
}

// TestLegendCorner checks that the curve plot's legend goes to the corner
// its curves leave empty, and to the conventional one when that is empty.
func TestLegendCorner(t *testing.T) {
	rising := func(x float64) float64 { return x / 50 }
	falling := func(x float64) float64 { return 10 - x/50 }
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	jump := func(x float64) float64 { return min(10, x) }
	for _, c := range []struct {
		name      string
		groups    []bo.Group
		top, left bool
	}{
		// A slow climber and a flat curve at the bottom (the molecule
		// comparison's prior sampling) fill both right-hand corners.
		{"rising and flat", []bo.Group{
			curveGroup("climber", true, 1, 501, 0, rising), curveGroup("flat", true, 1, 501, 0, flat(0))}, true, true},
		// A curve that jumps up at once leaves the bottom right empty.
		{"jump", []bo.Group{curveGroup("jump", true, 1, 501, 0, jump)}, false, false},
		// A slow fall with a flat curve at the top fills the top right.
		{"falling and flat", []bo.Group{
			curveGroup("faller", false, 1, 501, 0, falling), curveGroup("flat", false, 1, 501, 0, flat(10))}, false, true},
		// A fall at once leaves the top right empty.
		{"drop", []bo.Group{curveGroup("drop", false, 1, 501, 0, func(x float64) float64 { return 10 - jump(x) })}, true, false},
	} {
		p, err := curvePlot("", c.groups, bestAxes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Legend.Top != c.top || p.Legend.Left != c.left {
			t.Errorf("%s: legend top=%v left=%v, want top=%v left=%v", c.name, p.Legend.Top, p.Legend.Left, c.top, c.left)
		}
	}
}

// TestCurveCover checks the cover measure on a rectangle across a flat mean
// line inside its band: the line's length under it plus a quarter of the
// band's area in lengths of the rectangle's height.
func TestCurveCover(t *testing.T) {
	g := curveGroup("g", true, 2, 11, 5, func(float64) float64 { return 5 })
	id := func(v float64) vg.Length { return vg.Length(v) }
	r := vg.Rectangle{Min: vg.Point{X: 2, Y: 0}, Max: vg.Point{X: 4, Y: 10}}
	// Line: 2 under the rectangle; band: area 2 x 10, a quarter of it over
	// the height 10 is 0.5.
	if got, want := curveCover(r, []bo.Group{g}, 0, id, id), 2.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("cover = %v, want %v", got, want)
	}
	one := curveGroup("g", true, 1, 11, 5, func(float64) float64 { return 5 })
	if got, want := curveCover(r, []bo.Group{one}, 0, id, id), 2.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cover of a single run (no band) = %v, want %v", got, want)
	}
	r.Min.Y, r.Max.Y = 6, 10
	if got, want := curveCover(r, []bo.Group{g}, 0, id, id), 0.25*2*4/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("cover above the line = %v, want %v", got, want)
	}
}

// scoredRun writes a run directory whose queries are distinct objects with
// the given scores, after a labelled start whose best is initial.
func scoredRun(t *testing.T, dir string, config map[string]string, initial float64, scores []float64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	points := make([]string, len(scores))
	for i := range points {
		points[i] = fmt.Sprintf("x%d", i)
	}
	err := numpy.WriteNPZ(filepath.Join(dir, bo.ResultsFile), []numpy.Array{
		{Name: "opt_points", Shape: []int{len(points)}, Data: points},
		{Name: "opt_point_properties", Shape: []int{len(scores)}, Data: scores},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{initial}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlotExtremeScores: plot draws (and prints) runs of any finite scores
// without a panic: ±1e308 and ±MaxFloat64 best scores, alone and averaged
// with each other (a mean and a band beyond float64), all-equal scores, a
// run with no query (one point), all failures, a start without a best
// (NaN: it failed whole) before -1e308; both metrics.
func TestPlotExtremeScores(t *testing.T) {
	big := math.MaxFloat64
	cases := []struct {
		name     string
		maximize string
		initial  []float64
		scores   [][]float64
	}{
		{"minimised -1e308", "false", []float64{0.5}, [][]float64{{0.4, -1e308, 0.3}}},
		{"maximised +1e308 from -1e308", "true", []float64{-1e308}, [][]float64{{1, 1e308}}},
		{"two seeds at ±1e308", "true", []float64{0, 0}, [][]float64{{1e308}, {-1e308}}},
		{"two seeds at ±MaxFloat64", "false", []float64{big, -big}, [][]float64{{-big, big}, {big, -big}}},
		{"tiny differences", "true", []float64{1e-320, 2e-320}, [][]float64{{5e-324, 3e-320}, {1e-320}}},
		{"all equal", "true", []float64{0.7, 0.7}, [][]float64{{0.7, 0.7, 0.7}, {0.7, 0.7}}},
		{"one point", "true", []float64{0.2}, [][]float64{{}}},
		{"all failures", "false", []float64{7}, [][]float64{{7, 7, 7, 7}}},
		{"no best at the start, then -1e308", "false", []float64{math.NaN(), 0.5}, [][]float64{{-1e308, 1}, {0.2}}},
	}
	for _, c := range cases {
		root := t.TempDir()
		var dirs []string
		for i, s := range c.scores {
			cfg := map[string]string{"task": "expression", "maximize": c.maximize, "seed": fmt.Sprint(i), "strategy": "bo"}
			dirs = append(dirs, scoredRun(t, filepath.Join(root, fmt.Sprint(i)), cfg, c.initial[i], s))
		}
		for _, metric := range []string{"best", "top10"} {
			if metric == "top10" && (c.maximize == "false" || c.name == "one point") {
				continue
			}
			out := filepath.Join(root, metric+".png")
			app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{plotCommand()}}
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				return app.Run(append([]string{"tlbo-native", "plot", "--metric", metric, "--out", out}, dirs...))
			}()
			if err != nil {
				t.Errorf("%s, %s: %v", c.name, metric, err)
				continue
			}
			if st, err := os.Stat(out); err != nil || st.Size() == 0 {
				t.Errorf("%s, %s: no picture: %v", c.name, metric, err)
			}
		}
	}
}
