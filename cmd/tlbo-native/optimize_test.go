package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
)

func runCLI(args ...string) error {
	return newApp().Run(append([]string{"tlbo-native"}, args...))
}

// tinyExpressionData writes a data directory of 400 grammar-sampled
// expressions.
func tinyExpressionData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "expression"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(expression.Generate(400, 1), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "expression", expression.DataFileName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrainOptimizeAndPlot runs the verbs as a user would on a small
// expression data set: pretraining, three short runs (two seeds of T-LBO,
// random search), the plot of all, a refused resume, bad flags, and the
// error for a missing data set.
func TestTrainOptimizeAndPlot(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	vae := filepath.Join(dir, "gvae.pt")
	if err := runCLI("train", "--task", "expression", "--data-dir", data, "--epochs", "1", "--batch-size", "64",
		"--prior-samples", "10", "--decode-attempts", "2", "--out", vae); err != nil {
		t.Fatal(err)
	}
	run := []string{"optimize", "--task", "expression", "--data-dir", data, "--vae", vae, "--budget", "4", "--retrain-every", "2",
		"--retrain-epochs", "0.2", "--initial-retrain-epochs", "0.2", "--n-best", "30", "--n-rand", "10", "--inducing", "0",
		"--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2"}
	for _, seed := range []string{"1", "2"} {
		if err := runCLI(append(run, "--seed", seed, "--run-dir", filepath.Join(dir, "bo"+seed))...); err != nil {
			t.Fatal(err)
		}
	}
	if err := runCLI(append(run, "--strategy", "random", "--run-dir", filepath.Join(dir, "rs"))...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bo1/best.png", "bo1/results.npz", "bo1/journal.jsonl", "bo1/config.json", "bo1/model-v1/model.pt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	out := filepath.Join(dir, "all.png")
	if err := runCLI("plot", "--out", out, filepath.Join(dir, "bo1"), filepath.Join(dir, "bo2"), filepath.Join(dir, "rs")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	// Resuming with another k is refused, naming it.
	err := runCLI(append(run, "--seed", "1", "--k", "0.1", "--resume", "--run-dir", filepath.Join(dir, "bo1"))...)
	if err == nil || !strings.Contains(err.Error(), `k: the run has "0.001", now "0.1"`) {
		t.Errorf("resume with another k: %v", err)
	}
	if err := runCLI(append(run, "--k", "many", "--run-dir", t.TempDir())...); err == nil || !strings.Contains(err.Error(), "--k") {
		t.Errorf("--k many: %v, want an error naming --k", err)
	}
	if err := runCLI(append(run, "--nu", "0.05", "--elbo", "c", "--run-dir", t.TempDir())...); err == nil || !strings.Contains(err.Error(), "--nu") {
		t.Errorf("--nu with the contrastive ELBO: %v, want an error naming --nu", err)
	}
	if err := runCLI("plot", "--out", out, filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("plot of a missing run: %v", err)
	}
	if err := runCLI("optimize", "--task", "nonesuch", "--vae", vae, "--run-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), `unknown task "nonesuch"`) {
		t.Errorf("unknown task: %v", err)
	}
	empty := t.TempDir()
	err = runCLI("train", "--task", "expression", "--data-dir", empty, "--epochs", "1", "--out", filepath.Join(dir, "x.pt"))
	if err == nil || !strings.Contains(err.Error(), "--synthetic-data") || !strings.Contains(err.Error(), empty) {
		t.Errorf("missing data set: %v", err)
	}
	// encode and decode through the command line.
	in, z, dec := filepath.Join(dir, "in.txt"), filepath.Join(dir, "z.npy"), filepath.Join(dir, "dec.txt")
	os.WriteFile(in, []byte("x * 2\nexp( x ) / 3\n"), 0o644)
	if err := runCLI("encode", "--task", "expression", "--vae", vae, "--in", in, "--out", z); err != nil {
		t.Fatal(err)
	}
	if err := runCLI("decode", "--task", "expression", "--vae", vae, "--in", z, "--out", dec, "--seed", "1"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dec); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Errorf("decoded %q, %v", b, err)
	}
	// The checkpoint names its task: encode, decode, analyze and optimize
	// take it from there, and a --task that disagrees is refused.
	z2, dec2 := filepath.Join(dir, "z2.npy"), filepath.Join(dir, "dec2.txt")
	if err := runCLI("encode", "--vae", vae, "--in", in, "--out", z2); err != nil {
		t.Fatal(err)
	}
	if a, b := readFile(t, z), readFile(t, z2); a != b {
		t.Error("encode without --task differs from encode --task expression")
	}
	if err := runCLI("decode", "--vae", vae, "--in", z, "--out", dec2, "--seed", "1"); err != nil {
		t.Fatal(err)
	}
	if a, b := readFile(t, dec), readFile(t, dec2); a != b {
		t.Error("decode without --task differs from decode --task expression")
	}
	for _, args := range [][]string{
		{"encode", "--task", "topology", "--vae", vae, "--in", in, "--out", z2},
		{"optimize", "--task", "molecule", "--vae", vae, "--run-dir", t.TempDir()},
		{"analyze", "gp-loglik", "--task", "topology", "--vae", vae, "--out", t.TempDir()},
	} {
		if err := runCLI(args...); err == nil || !strings.Contains(err.Error(), "--task") || !strings.Contains(err.Error(), vae) {
			t.Errorf("%s with a --task other than the checkpoint's: %v", args[0], err)
		}
	}
	if err := runCLI(append(append([]string{"optimize"}, run[3:]...), "--budget", "2", "--seed", "3", "--run-dir", filepath.Join(dir, "inferred"))...); err != nil {
		t.Errorf("optimize without --task: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOptimizeResumeTakesFlags: optimize --resume takes the flags the run
// was started with (flags.json), as train --resume takes a checkpoint's
// settings: with none but --run-dir it continues the run as it was set
// up, --budget extends it (and is kept for the next resume), and a setting
// of the run's configuration given with another value is refused, naming
// both values.
func TestOptimizeResumeTakesFlags(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	run := filepath.Join(dir, "run")
	if err := runCLI("optimize", "--vae", vae, "--data-dir", data, "--budget", "2", "--retrain-every", "2",
		"--retrain-epochs", "0.2", "--initial-retrain-epochs", "0.2", "--n-best", "30", "--n-rand", "10", "--inducing", "0",
		"--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2", "--k", "0.1", "--seed", "3", "--run-dir", run); err != nil {
		t.Fatal(err)
	}
	config := readFile(t, filepath.Join(run, bo.ConfigFile))
	err := runCLI("optimize", "--resume", "--run-dir", run, "--k", "0.5")
	if err == nil || !strings.Contains(err.Error(), `k: the run has "0.1", now "0.5"`) {
		t.Errorf("resume with another --k: %v, want a refusal naming both values", err)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", run); err != nil {
		t.Fatalf("resume with no flags: %v", err)
	}
	if got := readFile(t, filepath.Join(run, bo.ConfigFile)); got != config {
		t.Errorf("resume with no flags changed the configuration:\n%s\nwas\n%s", got, config)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", run, "--budget", "3"); err != nil {
		t.Fatalf("resume with --budget 3: %v", err)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", run); err != nil {
		t.Fatalf("resume after the extension: %v", err)
	}
	c, err := bo.ReadCurve(run)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Field("budget"); c.Distinct() != 3 || v != "3" {
		t.Errorf("after --budget 3 and a resume without it: %d distinct evaluations, budget %s; want 3 and 3", c.Distinct(), v)
	}
}

// TestEncodeSkipsGrammarErrors: encode --skip-invalid covers an expression
// outside the grammar as it covers a molecule the network cannot take: its
// row is NaN and the others are encoded; without it the error names the
// expression and the switch.
func TestEncodeSkipsGrammarErrors(t *testing.T) {
	_, dir, vae := tinyExpressionVAE(t)
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "z.npy")
	if err := os.WriteFile(in, []byte("x * 2\nx +\nsin( x )\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runCLI("encode", "--vae", vae, "--in", in, "--out", out)
	if err == nil || !strings.Contains(err.Error(), `"x +"`) || !strings.Contains(err.Error(), "--skip-invalid") {
		t.Errorf("encode of a file with a grammar error: %v, want an error naming the expression and --skip-invalid", err)
	}
	if err := runCLI("encode", "--vae", vae, "--in", in, "--out", out, "--skip-invalid"); err != nil {
		t.Fatalf("encode --skip-invalid: %v", err)
	}
	a, err := numpy.ReadNPY(out)
	if err != nil {
		t.Fatal(err)
	}
	z := a.Data.([]float64)
	d := a.Shape[1]
	if a.Shape[0] != 3 || math.IsNaN(z[0]) || !math.IsNaN(z[d]) || math.IsNaN(z[2*d]) {
		t.Errorf("encode --skip-invalid wrote shape %v, rows NaN %v %v %v; want 3 rows, the second NaN", a.Shape, math.IsNaN(z[0]),
			math.IsNaN(z[d]), math.IsNaN(z[2*d]))
	}
}

// TestWarpAlias: --warp is the loop's, and --elbo w, W-LBO's name, is
// --elbo lbo --warp: both spellings make the same run, whose config.json
// says elbo w and warp true as runs made with --elbo w always have, so
// each resumes the other; a run without the warping is another run, and
// --elbo w with --warp=false is refused.
func TestWarpAlias(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	args := func(run string, extra ...string) []string {
		return append([]string{"optimize", "--vae", vae, "--data-dir", data, "--budget", "1", "--retrain-every", "2",
			"--retrain-epochs", "0.2", "--initial-retrain-epochs", "0", "--n-best", "30", "--n-rand", "10", "--inducing", "0",
			"--raw-samples", "64", "--restarts", "2", "--decode-attempts", "2", "--seed", "3", "--run-dir", run}, extra...)
	}
	alias, flag, plain := filepath.Join(dir, "alias"), filepath.Join(dir, "flag"), filepath.Join(dir, "plain")
	for run, extra := range map[string][]string{alias: {"--elbo", "w"}, flag: {"--elbo", "lbo", "--warp"}, plain: {"--elbo", "lbo"}} {
		if err := runCLI(args(run, extra...)...); err != nil {
			t.Fatalf("%s: %v", extra, err)
		}
	}
	config := readFile(t, filepath.Join(alias, bo.ConfigFile))
	if got := readFile(t, filepath.Join(flag, bo.ConfigFile)); got != config {
		t.Errorf("--elbo lbo --warp recorded\n%s\n--elbo w\n%s", got, config)
	}
	c, err := bo.ReadCurve(alias)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Field("elbo"); e != "w" {
		t.Errorf("--elbo w recorded elbo %q, want w", e)
	}
	if w, _ := c.Field("warp"); w != "true" {
		t.Errorf("--elbo w recorded warp %q, want true", w)
	}
	// The warping reaches the GP: its fits journal the warping's range.
	for run, want := range map[string]bool{alias: true, flag: true, plain: false} {
		if got := strings.Contains(readFile(t, filepath.Join(run, bo.JournalFile)), `"warp_min"`); got != want {
			t.Errorf("%s: journal has a warped GP fit: %v, want %v", filepath.Base(run), got, want)
		}
	}
	if err := runCLI("optimize", "--resume", "--run-dir", alias, "--elbo", "lbo", "--warp", "--budget", "2"); err != nil {
		t.Errorf("--elbo w run resumed with --elbo lbo --warp: %v", err)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", flag, "--elbo", "w", "--budget", "2"); err != nil {
		t.Errorf("--elbo lbo --warp run resumed with --elbo w: %v", err)
	}
	err = runCLI("optimize", "--resume", "--run-dir", plain, "--elbo", "w")
	if err == nil || !strings.Contains(err.Error(), `warp: the run has "false", now "true"`) {
		t.Errorf("unwarped run resumed with --elbo w: %v, want a refusal naming warp", err)
	}
	err = runCLI(args(t.TempDir(), "--elbo", "w", "--warp=false")...)
	if err == nil || !strings.Contains(err.Error(), "--warp=false") {
		t.Errorf("--elbo w --warp=false: %v, want a refusal naming both", err)
	}
}

// TestWarmStartsDefaultAndLegacyResume: a new run takes the default warm
// starts (restarts - max(1, restarts/10)) and records them, and its resume
// without flags keeps them; a run made before the default (no warm-starts
// in config.json nor flags.json) resumes with warm starts off instead of
// being refused for today's default.
func TestWarmStartsDefaultAndLegacyResume(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	start := func(run string, more ...string) {
		t.Helper()
		startTinyRun(t, data, vae, run, append([]string{"--inducing", "0"}, more...)...)
	}
	warmStarts := func(run string) string {
		t.Helper()
		return runFields(t, filepath.Join(run, bo.ConfigFile))["warm-starts"]
	}

	run := filepath.Join(dir, "new")
	start(run)
	if w := warmStarts(run); w != "3" {
		t.Errorf("a new run with --restarts 4 records warm-starts %q, want 3", w)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", run, "--budget", "3"); err != nil {
		t.Fatalf("resume of a run with the default warm starts: %v", err)
	}

	legacy := filepath.Join(dir, "legacy")
	start(legacy, "--warm-starts", "0")
	dropFields(t, filepath.Join(legacy, bo.FlagsFile), "warm-starts") // as a run made before the default kept it
	if w := warmStarts(legacy); w != "" {
		t.Fatalf("a run with --warm-starts 0 records warm-starts %q, want none", w)
	}
	if err := runCLI("optimize", "--resume", "--run-dir", legacy, "--budget", "3"); err != nil {
		t.Fatalf("resume of a run made before the default: %v", err)
	}
	if w := warmStarts(legacy); w != "" {
		t.Errorf("the resumed legacy run records warm-starts %q, want none (off)", w)
	}
}

// TestResumeKeepsRecordedDefaults: a run made under an older default of a
// setting (here --gp-refit every and --repeats authors, given by no flag
// it kept) resumes with its own values when the resume does not name them,
// whether its config.json records them or predates them; naming another
// value is still refused.
func TestResumeKeepsRecordedDefaults(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	run := filepath.Join(dir, "old-default")
	startTinyRun(t, data, vae, run, "--inducing", "0", "--gp-refit", "every", "--repeats", "authors")
	edit := func(file string, drop ...string) {
		t.Helper()
		dropFields(t, filepath.Join(run, file), drop...)
	}
	recorded := func() map[string]string {
		t.Helper()
		return runFields(t, filepath.Join(run, bo.ConfigFile))
	}
	// As a run made when every and authors were the defaults: no flag kept.
	edit(bo.FlagsFile, "gp-refit", "repeats")
	if err := runCLI("optimize", "--resume", "--run-dir", run, "--budget", "3"); err != nil {
		t.Fatalf("resume of a run made under the old defaults: %v", err)
	}
	if m := recorded(); m["gp-refit"] != "every" || m["repeats"] != "authors" {
		t.Errorf("the resumed run records gp-refit %q and repeats %q, want every and authors", m["gp-refit"], m["repeats"])
	}
	// As a run made before gp-refit existed: config.json lacks it.
	edit(bo.FlagsFile, "gp-refit", "repeats")
	edit(bo.ConfigFile, "gp-refit")
	if err := runCLI("optimize", "--resume", "--run-dir", run, "--budget", "4"); err != nil {
		t.Fatalf("resume of a run made before gp-refit: %v", err)
	}
	if m := recorded(); m["gp-refit"] != "every" {
		t.Errorf("the resumed legacy run records gp-refit %q, want every", m["gp-refit"])
	}
	err := runCLI("optimize", "--resume", "--run-dir", run, "--budget", "5", "--gp-refit", "auto")
	if want := `gp-refit: the run has "every", now "auto"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resume naming another schedule: %v, want an error containing %s", err, want)
	}
}

// TestGPScheduleDefaults: a new run grows its inducing points between fits
// and caps a fit from scratch at bo.CappedGPIters unless its schedule (every)
// or objective (fitc) asks otherwise, a flag given wins, and a run made
// under the old defaults (fixed, 200) resumes with them.
func TestGPScheduleDefaults(t *testing.T) {
	data, dir, vae := tinyExpressionVAE(t)
	recorded := func(run string) (inducing, iters string) {
		t.Helper()
		m := runFields(t, filepath.Join(run, bo.ConfigFile))
		return m["gp-inducing"], m["gp-iters"]
	}
	capped, authors := strconv.Itoa(bo.CappedGPIters), strconv.Itoa(gp.DefaultMaxIter)
	for _, c := range []struct {
		name                   string
		args                   []string
		wantInducing, wantIter string
	}{
		{"default", nil, "grow", capped},
		{"every", []string{"--gp-refit", "every"}, "fixed", authors},
		{"fitc", []string{"--gp-objective", "fitc"}, "fixed", capped},
		{"given", []string{"--gp-inducing", "fixed", "--gp-iters", authors}, "fixed", authors},
		{"every-given", []string{"--gp-refit", "every", "--gp-iters", "7"}, "fixed", "7"},
	} {
		run := filepath.Join(dir, c.name)
		startTinyRun(t, data, vae, run, append([]string{"--inducing", "8"}, c.args...)...)
		if inducing, iters := recorded(run); inducing != c.wantInducing || iters != c.wantIter {
			t.Errorf("%s: config.json records gp-inducing %q and gp-iters %q, want %q and %q",
				c.name, inducing, iters, c.wantInducing, c.wantIter)
		}
	}
	err := runCLI("optimize", "--vae", vae, "--data-dir", data, "--budget", "1", "--gp-refit", "every", "--gp-inducing", "grow",
		"--run-dir", filepath.Join(dir, "refused"))
	if err == nil || !strings.Contains(err.Error(), "gp-inducing") {
		t.Errorf("--gp-refit every --gp-inducing grow: %v, want an error naming gp-inducing", err)
	}

	// A run made when fixed and 200 were the defaults keeps neither flag.
	old := filepath.Join(dir, "given")
	dropFields(t, filepath.Join(old, bo.FlagsFile), "gp-inducing", "gp-iters")
	if err := runCLI("optimize", "--resume", "--run-dir", old, "--budget", "3"); err != nil {
		t.Fatalf("resume of a run made under the old defaults: %v", err)
	}
	if inducing, iters := recorded(old); inducing != "fixed" || iters != authors {
		t.Errorf("the resumed run records gp-inducing %q and gp-iters %q, want fixed and %s", inducing, iters, authors)
	}
	// One made before gp-iters existed: config.json lacks it too.
	dropFields(t, filepath.Join(old, bo.ConfigFile), "gp-iters")
	if err := runCLI("optimize", "--resume", "--run-dir", old, "--budget", "4"); err != nil {
		t.Fatalf("resume of a run made before gp-iters: %v", err)
	}
	if _, iters := recorded(old); iters != authors {
		t.Errorf("the resumed legacy run records gp-iters %q, want %s", iters, authors)
	}
}

// startTinyRun starts a two-evaluation expression run on tinyExpressionVAE's
// network and data in run, with more flags.
func startTinyRun(t *testing.T, data, vae, run string, more ...string) {
	t.Helper()
	args := append([]string{"optimize", "--vae", vae, "--data-dir", data, "--budget", "2", "--retrain-every", "2",
		"--retrain-epochs", "0", "--initial-retrain-epochs", "0", "--n-best", "30", "--n-rand", "10",
		"--raw-samples", "64", "--restarts", "4", "--decode-attempts", "2", "--seed", "3", "--run-dir", run}, more...)
	if err := runCLI(args...); err != nil {
		t.Fatal(err)
	}
}

// runFields reads a run's config.json or flags.json (a flat object of strings).
func runFields(t *testing.T, path string) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(readFile(t, path)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// dropFields removes names from a run's config.json or flags.json, as a run
// made before they were recorded.
func dropFields(t *testing.T, path string, names ...string) {
	t.Helper()
	m := runFields(t, path)
	for _, k := range names {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
