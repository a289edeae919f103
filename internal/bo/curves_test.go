package bo_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

func TestBestCurve(t *testing.T) {
	q := bo.Queries{Points: []string{"a", "b", "c", "d"}, Scores: []float64{4, 2, 5, 1}}
	got := bo.BestCurve(3, q, false)
	if want := []float64{3, 3, 2, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("minimising: %v, want %v", got, want)
	}
	got = bo.BestCurve(3, q, true)
	if want := []float64{3, 4, 4, 5, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("maximising: %v, want %v", got, want)
	}
}

// TestBestCurveDistinct checks the x-axis of distinct evaluations: a
// repeat, an invalid decode and a known score add no point; a known score
// stays out of the best even when it would improve it (it was not
// evaluated), while an invalid decode's or an evaluated repeat's score
// counts with the next distinct evaluation.
func TestBestCurveDistinct(t *testing.T) {
	q := bo.Queries{
		Points: []string{"a", "b", "a", "", "c", "b", "d", ""},
		Scores: []float64{4, 6, 4, 2.5, 3, 1, 3.5, 0},
		Known:  []bool{false, false, false, false, false, true, false, false},
	}
	if got, want := q.Distinct(), []bool{true, true, false, false, true, false, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("distinct %v, want %v", got, want)
	}
	// Start 5; a 4; b 6 -> 4; (a again 4, invalid 2.5) c 3 -> 2.5; (b known 1: out) d 3.5 -> 2.5; the
	// trailing invalid adds no point.
	if got, want := bo.BestCurve(5, q, false), []float64{5, 4, 4, 2.5, 2.5}; !reflect.DeepEqual(got, want) {
		t.Errorf("curve %v, want %v", got, want)
	}
	// A known first occurrence is no evaluation: the next one of that
	// object is the distinct evaluation.
	q = bo.Queries{Points: []string{"a", "a", "b"}, Scores: []float64{1, 1, 2}, Known: []bool{true, false, false}}
	if got, want := q.Distinct(), []bool{false, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("known first occurrence: distinct %v, want %v", got, want)
	}
}

// writeRun writes a run directory with config.json and results.npz;
// known nil leaves opt_known out, as runs written before it.
func writeRun(t *testing.T, dir string, config map[string]string, points []string, scores []float64, known []int64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	arrays := []numpy.Array{
		{Name: "opt_points", Shape: []int{len(points)}, Data: points},
		{Name: "opt_point_properties", Shape: []int{len(scores)}, Data: scores},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{5}},
	}
	if known != nil {
		arrays = append(arrays, numpy.Array{Name: "opt_known", Shape: []int{len(known)}, Data: known})
	}
	if err := numpy.WriteNPZ(filepath.Join(dir, bo.ResultsFile), arrays); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadCurve reads synthetic runs holding repeats, invalid decodes and
// opt_known (and one without opt_known), groups them, counts seeds from the
// configurations and refuses runs of another task or direction on one axis.
func TestReadCurve(t *testing.T) {
	root := t.TempDir()
	cfg := func(seed, task, maximize string) map[string]string {
		return map[string]string{"task": task, "maximize": maximize, "seed": seed, "strategy": "bo", "elbo": "t"}
	}
	points := []string{"a", "b", "a", "", "c", "b", "d"}
	scores := []float64{4, 6, 4, 7, 3, 6, 3.5}
	a := writeRun(t, filepath.Join(root, "a"), cfg("0", "expression", "false"), points, scores, []int64{0, 0, 0, 0, 0, 1, 0})
	b := writeRun(t, filepath.Join(root, "b"), cfg("0", "expression", "false"), points, scores, nil)
	c, err := bo.ReadCurve(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{5, 4, 4, 3, 3}; !reflect.DeepEqual(c.Best, want) || c.Distinct() != 4 || c.Queries != 7 || c.Known != 1 {
		t.Errorf("curve %v, %d distinct of %d queries, %d known; want %v, 4 of 7, 1 known", c.Best, c.Distinct(), c.Queries, c.Known, want)
	}
	if c.Maximize {
		t.Error("maximize read as true")
	}
	old, err := bo.ReadCurve(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(old.Best, c.Best) || old.Known != 0 {
		t.Errorf("without opt_known: curve %v, %d known; want %v, 0", old.Best, old.Known, c.Best)
	}

	// Two runs of one seed are one seed.
	g := bo.GroupCurves([]bo.Curve{c, old})
	if len(g) != 1 || g[0].Seeds != 1 || g[0].Count() != "2 runs, 1 seed" {
		t.Errorf("groups %+v, want one group of 2 runs, 1 seed", g)
	}
	s1 := writeRun(t, filepath.Join(root, "s1"), cfg("1", "expression", "false"), points, scores, nil)
	c1, err := bo.ReadCurve(s1)
	if err != nil {
		t.Fatal(err)
	}
	if g := bo.GroupCurves([]bo.Curve{c, c1}); g[0].Count() != "2 seeds" {
		t.Errorf("two seeds counted as %q", g[0].Count())
	}
	if g := bo.GroupCurves([]bo.Curve{c, old, c1}); g[0].Count() != "3 runs, 2 seeds" {
		t.Errorf("three runs of two seeds counted as %q", g[0].Count())
	}
	if err := bo.CheckAxis([]bo.Curve{c, old, c1}); err != nil {
		t.Errorf("runs of one task and direction refused: %v", err)
	}

	// Another direction or another task is refused, naming both runs.
	up := writeRun(t, filepath.Join(root, "up"), cfg("0", "expression", "true"), points, scores, nil)
	topo := writeRun(t, filepath.Join(root, "topo"), cfg("0", "topology", "false"), points, scores, nil)
	for _, other := range []string{up, topo} {
		o, err := bo.ReadCurve(other)
		if err != nil {
			t.Fatal(err)
		}
		err = bo.CheckAxis([]bo.Curve{c, c1, o})
		if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), other) {
			t.Errorf("%s with %s: %v, want an error naming both", a, other, err)
		}
	}

	// Arrays that disagree are an error naming the file.
	bad := writeRun(t, filepath.Join(root, "bad"), cfg("0", "expression", "false"), points, scores[:3], nil)
	if _, err := bo.ReadCurve(bad); err == nil || !strings.Contains(err.Error(), "opt_point_properties") {
		t.Errorf("7 points, 3 scores: %v", err)
	}
	bad = writeRun(t, filepath.Join(root, "bad2"), cfg("0", "expression", "false"), points, scores, []int64{0, 1})
	if _, err := bo.ReadCurve(bad); err == nil || !strings.Contains(err.Error(), "opt_known") {
		t.Errorf("2 known of 7 queries: %v", err)
	}
	// A non-finite score (no journal holds one) is an error naming it.
	nan := append([]float64(nil), scores...)
	nan[2] = math.NaN()
	bad = writeRun(t, filepath.Join(root, "bad3"), cfg("0", "expression", "false"), points, nan, nil)
	if _, err := bo.ReadCurve(bad); err == nil || !strings.Contains(err.Error(), "opt_point_properties[2] is NaN") {
		t.Errorf("a NaN score: %v", err)
	}
}

// TestGroupExtremeCurves: the mean and standard deviation of runs at
// ±MaxFloat64 are finite (the deviation capped at MaxFloat64), and those
// of ordinary runs are the plain formulas'.
func TestGroupExtremeCurves(t *testing.T) {
	big := math.MaxFloat64
	run := func(seed string, best ...float64) bo.Curve {
		return bo.Curve{Fields: []bo.Field{{"seed", seed}}, Best: best}
	}
	g := bo.GroupCurves([]bo.Curve{run("0", big, -big, 1e308), run("1", -big, -big, -1e308), run("2", big, -big, 1e308)})
	for i := range g[0].Mean {
		m, s := g[0].Mean[i], g[0].Std[i]
		if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(s) || math.IsInf(s, 0) {
			t.Errorf("point %d: mean %v ± %v", i, m, s)
		}
	}
	// Summing thirds rounds: the mean is within an ulp or two.
	if m, s := g[0].Mean[1], g[0].Std[1]; m > -big*(1-1e-15) || s > 1e-15*big {
		t.Errorf("three runs at -MaxFloat64: %v ± %v", m, s)
	}
	g = bo.GroupCurves([]bo.Curve{run("0", 1, 2), run("1", 2, 5)})
	if g[0].Mean[1] != 3.5 || g[0].Std[1] != math.Sqrt(4.5) {
		t.Errorf("runs at 2 and 5: %v ± %v, want 3.5 ± √4.5", g[0].Mean[1], g[0].Std[1])
	}
}

func TestGroupCurves(t *testing.T) {
	fields := func(strategy, seed string) []bo.Field {
		return []bo.Field{{"strategy", strategy}, {"seed", seed}, {"elbo", "t"}}
	}
	curves := []bo.Curve{
		{Dir: "a", Fields: fields("bo", "1"), Best: []float64{3, 2, 1}},
		{Dir: "b", Fields: fields("random", "1"), Best: []float64{3, 3}},
		{Dir: "c", Fields: fields("bo", "2"), Best: []float64{3, 1, 1, 0}},
	}
	g := bo.GroupCurves(curves)
	if len(g) != 2 || len(g[0].Runs) != 2 || len(g[1].Runs) != 1 {
		t.Fatalf("groups %+v, want bo (2 runs) and random (1 run)", g)
	}
	if g[0].Label != "strategy=bo" || g[1].Label != "strategy=random" {
		t.Errorf("labels %q %q, want strategy=bo and strategy=random", g[0].Label, g[1].Label)
	}
	// LBO at q = 1 and at q = 10 with a trust region beside random search:
	// the strategy alone would name both LBO groups alike.
	withQ := func(strategy, q, tr, seed string) []bo.Field {
		return []bo.Field{{"strategy", strategy}, {"seed", seed}, {"q", q}, {"trust-region", tr}, {"n-best", "2500"}}
	}
	lg := bo.GroupCurves([]bo.Curve{
		{Dir: "q1", Fields: withQ("bo", "1", "false", "0"), Best: []float64{1}},
		{Dir: "q10", Fields: withQ("bo", "10", "true", "0"), Best: []float64{1}},
		{Dir: "r", Fields: withQ("random", "1", "false", "0"), Best: []float64{1}},
		{Dir: "q10b", Fields: withQ("bo", "10", "true", "1"), Best: []float64{1}},
	})
	var labels []string
	for _, x := range lg {
		labels = append(labels, x.Label)
	}
	if want := []string{"strategy=bo q=1 trust-region=false", "strategy=bo q=10 trust-region=true", "strategy=random"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if g[0].Count() != "2 seeds" || g[1].Count() != "1 run" {
		t.Errorf("counts %q %q, want 2 seeds and 1 run", g[0].Count(), g[1].Count())
	}
	if want := []float64{3, 1.5, 1}; !reflect.DeepEqual(g[0].Mean, want) {
		t.Errorf("mean %v, want %v (the shortest run's length)", g[0].Mean, want)
	}
	if want := []float64{0, math.Sqrt(0.5), 0}; math.Abs(g[0].Std[1]-want[1]) > 1e-15 || g[0].Std[0] != 0 {
		t.Errorf("std %v, want %v", g[0].Std, want)
	}
}
