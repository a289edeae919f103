package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/internal/task/topology"
	"github.com/tlbo-native/tlbo-native/models"
	convnet "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

func runAnalyze(args ...string) error {
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{analyzeCommand()}}
	return app.Run(append([]string{"tlbo-native", "analyze"}, args...))
}

// writeLatents writes n random 2-d latent points and smooth scores.
func writeLatents(t *testing.T, dir string, n int) (z, y string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	zs, ys := make([]float64, 2*n), make([]float64, n)
	for i := range n {
		zs[2*i], zs[2*i+1] = rng.Float64(), rng.Float64()
		ys[i] = zs[2*i] + zs[2*i+1]*zs[2*i+1]
	}
	z, y = filepath.Join(dir, "z.npy"), filepath.Join(dir, "y.npy")
	if err := numpy.WriteNPY(z, numpy.Array{Shape: []int{n, 2}, Data: zs}); err != nil {
		t.Fatal(err)
	}
	if err := numpy.WriteNPY(y, numpy.Array{Shape: []int{n}, Data: ys}); err != nil {
		t.Fatal(err)
	}
	return z, y
}

func TestAnalyzeLatentFiles(t *testing.T) {
	dir := t.TempDir()
	z, y := writeLatents(t, dir, 80)
	out := filepath.Join(dir, "out")
	if err := runAnalyze("gp-loglik", "--latents", z, "--scores", y, "--latents", z, "--scores", y, "--name", "a", "--name", "b",
		"--splits", "2", "--inducing", "0", "--out", out); err != nil {
		t.Fatal(err)
	}
	if err := runAnalyze("latent-distances", "--latents", z, "--scores", y, "--max-pairs", "500", "--max-points", "60", "--out", out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gp_loglik.txt", "gp_loglik.npz", "gp_loglik.png", "latent_distances.txt", "latent_distances.npz", "latent_distances.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(out, "latent_distances.txt"))
	for _, want := range []string{"a random subset of 60 of the 80 points", "(sampled)", "\nz "} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("latent_distances.txt lacks %q:\n%s", want, txt)
		}
	}
	bad := [][]string{
		{"gp-loglik", "--out", out},
		{"gp-loglik", "--latents", z, "--out", out},
		{"gp-loglik", "--latents", z, "--scores", y, "--name", "a", "--name", "b", "--out", out},
		{"gp-loglik", "--latents", z, "--scores", z, "--out", out},
		{"gp-loglik", "--vae", "x.pt", "--out", out},
		{"gp-loglik", "--latents", z, "--scores", y, "--gp-objective", "dtc", "--out", out},
		{"latent-distances", "--latents", z, "--scores", y, "--bins", "0", "--out", out},
	}
	wants := []string{"no input", "1 --latents but 0 --scores", "2 --name for 1 inputs", "want a 1-d array", "--task", "--gp-objective", "--bins"}
	for i, args := range bad {
		if err := runAnalyze(args...); err == nil || !strings.Contains(err.Error(), wants[i]) {
			t.Errorf("%v: %v, want an error containing %q", args, err, wants[i])
		}
	}
}

// TestAnalyzeVAE encodes a task's data through the registry.
func TestAnalyzeVAE(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	vae := filepath.Join(dir, "gvae.pt")
	if err := runCLI("train", "--task", "expression", "--data-dir", data, "--epochs", "1", "--batch-size", "64",
		"--prior-samples", "2", "--decode-attempts", "1", "--out", vae); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := runAnalyze("latent-distances", "--task", "expression", "--data-dir", data, "--vae", vae, "--vae", vae, "--name", "one", "--name", "two", "--out", out); err != nil {
		t.Fatal(err)
	}
	if err := runAnalyze("gp-loglik", "--task", "expression", "--data-dir", data, "--vae", vae, "--inducing", "20", "--splits", "2", "--out", out); err != nil {
		t.Fatal(err)
	}
	txt, _ := os.ReadFile(filepath.Join(out, "gp_loglik.txt"))
	if !strings.Contains(string(txt), "task expression: 160 labelled points") || !strings.Contains(string(txt), "\ngvae ") {
		t.Errorf("gp_loglik.txt:\n%s", txt)
	}
	if err := runAnalyze("latent-distances", "--task", "expression", "--data-dir", data, "--vae", vae, "--max-points", "50",
		"--seed", "7", "--out", out); err != nil {
		t.Fatal(err)
	}
	txt, _ = os.ReadFile(filepath.Join(out, "latent_distances.txt"))
	for _, want := range []string{"task expression: 160 labelled points", "gvae: a random subset of 50 of the 160 points", "25/25"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("latent_distances.txt lacks %q:\n%s", want, txt)
		}
	}
	// --max-points above the data's size analyses all of it.
	if err := runAnalyze("latent-distances", "--task", "expression", "--data-dir", data, "--vae", vae, "--max-points", "500",
		"--out", out); err != nil {
		t.Fatal(err)
	}
	if txt, _ = os.ReadFile(filepath.Join(out, "latent_distances.txt")); strings.Contains(string(txt), "a random subset") || !strings.Contains(string(txt), "80/80") {
		t.Errorf("latent_distances.txt of --max-points 500 over 160 points:\n%s", txt)
	}
	checkEncodeSubset(t, data, vae)
}

// checkEncodeSubset checks that EncodeDataset with rows encodes the points
// that subsample keeps of the whole data's encoding: the same scores, and
// encoder means equal to float32 rounding (the grammar VAE's encoder works
// in float32 on batches of other sizes and compositions, so the products'
// summation order may differ; its means are of order 1 and sums of a few
// hundred terms, hence 1e-5).
func checkEncodeSubset(t *testing.T, data, vae string) {
	t.Helper()
	tk, err := task.Lookup("expression")
	if err != nil {
		t.Fatal(err)
	}
	env := &task.Env{Opts: task.Values{}, DataDir: data, Device: torch.CPU}
	all, err := tk.EncodeDataset(env, vae, nil)
	if err != nil {
		t.Fatal(err)
	}
	var asked int
	sub, err := tk.EncodeDataset(env, vae, func(n int) []int { asked = n; return subsetRows(n, 50, 7) })
	if err != nil {
		t.Fatal(err)
	}
	if asked != 160 || all.Total != 160 || sub.Total != 160 || len(all.Scores) != 160 || len(sub.Scores) != 50 {
		t.Fatalf("rows asked for %d points; totals %d and %d, %d and %d scores, want 160 and 50", asked, all.Total, sub.Total,
			len(all.Scores), len(sub.Scores))
	}
	d := len(all.Z) / 160
	z := mat.NewDense(160, d, all.Z)
	wantZ, wantY := subsample(z, all.Scores, 50, 7)
	if !slices.Equal(sub.Scores, wantY) {
		t.Errorf("subset scores %v, want %v", sub.Scores, wantY)
	}
	if got := mat.NewDense(50, d, sub.Z); !mat.EqualApprox(got, wantZ, 1e-5) {
		t.Errorf("subset encoder means differ from the whole encoding's rows by more than 1e-5")
	}
	if _, err := tk.EncodeDataset(env, vae, func(int) []int { return []int{3, 160} }); err == nil || !strings.Contains(err.Error(), "row 160 of 160") {
		t.Errorf("row out of range: %v", err)
	}
}

// recoveryFixture writes a fabricated BO run directory of the topology
// task: config.json (method, seed, target) and a model version per seed
// (untrained conv VAEs of latent size 2, initialised from that seed).
func recoveryFixture(t *testing.T, dir string, fields map[string]string, versionSeeds ...uint64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.ConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for v, s := range versionSeeds {
		writeTinyConvVAE(t, filepath.Join(dir, fmt.Sprintf("model-v%d", v), "model.pt"), s)
	}
}

// writeTinyConvVAE saves an untrained 2-d conv VAE initialised from seed.
func writeTinyConvVAE(t *testing.T, path string, seed uint64) {
	t.Helper()
	if err := torch.ManualSeed(seed); err != nil {
		t.Fatal(err)
	}
	net, err := convnet.New(convnet.Config{Latent: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := models.SaveNetwork(path, net); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyzeDomainRecovery runs the verb on three fabricated runs (two
// LBO seeds, one T-LBO) with their pretrained VAEs and checks the table
// against the protocol run directly on the same checkpoints.
func TestAnalyzeDomainRecovery(t *testing.T) {
	root := t.TempDir()
	pre := map[string]string{"lbo": filepath.Join(root, "vae-lbo.pt"), "t": filepath.Join(root, "vae-t.pt")}
	writeTinyConvVAE(t, pre["lbo"], 100)
	writeTinyConvVAE(t, pre["t"], 200)
	// Every pixel material: the similarity of a design with it is the
	// square root of its share of material, about 0.707 for an untrained
	// decoder's near-1/2 probabilities, so the threshold below splits them.
	full := make(topology.Design, topology.Pixels)
	for i := range full {
		full[i] = 1
	}
	run := func(elbo, seed string) map[string]string {
		sum, err := fileSHA256(pre[elbo])
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"task": "topology", "strategy": "bo", "elbo": elbo, "seed": seed, "vae-sha256": sum,
			"target": "the full design", "target-key": topology.Key(full)}
	}
	dirs := []string{filepath.Join(root, "lbo-seed1"), filepath.Join(root, "lbo-seed2"), filepath.Join(root, "tlbo-seed1")}
	recoveryFixture(t, dirs[0], run("lbo", "1"), 1, 2, 3)
	recoveryFixture(t, dirs[1], run("lbo", "2"), 4, 5)
	recoveryFixture(t, dirs[2], run("t", "1"), 6, 7, 8)
	out := filepath.Join(root, "out")
	// No --task: the runs' configurations name it.
	args := []string{"domain-recovery", "--decodes", "40", "--candidates", "6", "--threshold", "0.7071",
		"--seed", "9", "--out", out, "--pretrained", pre["lbo"], "--pretrained", pre["t"]}
	for _, d := range dirs {
		args = append(args, "--run", d)
	}
	if err := runAnalyze(args...); err != nil {
		t.Fatal(err)
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(out, analysis.RecoveryBase+".npz"))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]numpy.Array{}
	for _, a := range arrays {
		by[a.Name] = a
	}
	if l := by["l"].Data.([]int64); !slices.Equal(l, []int64{0, 1, 2, 3}) {
		t.Fatalf("l %v, want 0 (pretrained) to 3", l)
	}
	if m := by["methods"].Data.([]string); !slices.Equal(m, []string{"LBO", "T-LBO"}) {
		t.Errorf("methods %v", m)
	}
	// The protocol run directly on each run's checkpoints.
	tk, err := task.Lookup("topology")
	if err != nil {
		t.Fatal(err)
	}
	tt := tk.(task.TargetTask)
	env := &task.Env{Device: torch.CPU}
	direct := func(r int, o analysis.RecoveryOptions) []analysis.RecoveryStep {
		fields := run([]string{"lbo", "lbo", "t"}[r], []string{"1", "2", "1"}[r])
		files, versions := map[int]string{-1: pre[fields["elbo"]]}, []int{-1}
		for v := range []int{3, 2, 3}[r] {
			files[v] = filepath.Join(dirs[r], fmt.Sprintf("model-v%d", v), "model.pt")
			versions = append(versions, v)
		}
		open := func(v int) (analysis.RecoveryModel, error) { return tt.OpenTargetModel(env, files[v], fields) }
		steps, err := analysis.DomainRecovery(versions, open, o)
		if err != nil {
			t.Fatal(err)
		}
		return steps
	}
	got := by["p"].Data.([]float64)
	var lboMean [4]float64
	for r, d := range dirs {
		steps := direct(r, analysis.RecoveryOptions{Decodes: 40, Threshold: 0.7071, Candidates: 6, Seed: 9})
		for j := range 4 {
			want := math.NaN()
			if j < len(steps) {
				want = steps[j].P
			}
			if g := got[r*4+j]; g != want && !(math.IsNaN(g) && math.IsNaN(want)) {
				t.Errorf("run %s l=%d: p %v, want %v", d, j, g, want)
			}
			if r < 2 && j < 3 {
				lboMean[j] += want / 2
			}
		}
	}
	mean := by["mean"].Data.([]float64)
	for j := range 3 {
		if math.Abs(mean[j]-lboMean[j]) > 1e-12 {
			t.Errorf("LBO mean at l=%d: %v, want %v", j, mean[j], lboMean[j])
		}
	}
	if c := by["count"].Data.([]int64); !slices.Equal(c, []int64{2, 2, 2, 1, 1, 1, 1, 1}) {
		t.Errorf("runs per method and l: %v", c)
	}
	txt, _ := os.ReadFile(filepath.Join(out, analysis.RecoveryBase+".txt"))
	for _, want := range []string{"target: the full design", "40 decodings", "lbo-seed2", "T-LBO"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("domain_recovery.txt lacks %q:\n%s", want, txt)
		}
	}

	// The same runs with the task's rounded decodes (--decoding mode).
	outMode := filepath.Join(root, "out-mode")
	argsMode := []string{"domain-recovery", "--decoding", "mode", "--candidates", "6", "--threshold", "0.7071",
		"--seed", "9", "--out", outMode, "--pretrained", pre["lbo"], "--pretrained", pre["t"]}
	for _, d := range dirs {
		argsMode = append(argsMode, "--run", d)
	}
	if err := runAnalyze(argsMode...); err != nil {
		t.Fatal(err)
	}
	arrays, err = numpy.ReadNPZ(filepath.Join(outMode, analysis.RecoveryBase+".npz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		if a.Name != "p" {
			continue
		}
		got := a.Data.([]float64)
		for r, d := range dirs {
			steps := direct(r, analysis.RecoveryOptions{Mode: true, Threshold: 0.7071, Candidates: 6, Seed: 9})
			for j, s := range steps {
				if g := got[r*4+j]; g != s.P || (g != 0 && g != 1) {
					t.Errorf("mode: run %s l=%d: p %v, want %v (0 or 1)", d, j, g, s.P)
				}
			}
		}
	}
	txt, _ = os.ReadFile(filepath.Join(outMode, analysis.RecoveryBase+".txt"))
	if !strings.Contains(string(txt), "decoder's mode") || strings.Contains(string(txt), "40 decodings") {
		t.Errorf("domain_recovery.txt of --decoding mode does not say so:\n%s", txt)
	}
}

func TestAnalyzeDomainRecoveryErrors(t *testing.T) {
	root := t.TempDir()
	key := topology.Key(slices.Repeat([]uint8{1}, topology.Pixels))
	ok := map[string]string{"task": "topology", "strategy": "bo", "elbo": "lbo", "seed": "1", "target-key": key, "vae-sha256": "abc"}
	good := filepath.Join(root, "good")
	recoveryFixture(t, good, ok, 1)
	expr := filepath.Join(root, "expr")
	recoveryFixture(t, expr, map[string]string{"task": "expression", "seed": "1"})
	empty := filepath.Join(root, "empty")
	recoveryFixture(t, empty, ok)
	noTarget := filepath.Join(root, "notarget")
	recoveryFixture(t, noTarget, map[string]string{"task": "topology", "strategy": "bo", "elbo": "lbo", "seed": "1"}, 1)
	out := filepath.Join(root, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "topology", "--run", filepath.Join(root, "none")}, "config.json"},
		{[]string{"--task", "topology", "--run", expr}, `field task of config.json is "expression", want "topology"`},
		{[]string{"--task", "topology", "--run", empty}, "no model versions"},
		{[]string{"--task", "topology", "--run", noTarget}, "notarget/config.json: no field target-key"},
		{[]string{"--task", "topology", "--run", good, "--pretrained", filepath.Join(good, "model-v0", "model.pt")}, "matches none of --pretrained"},
		{[]string{"--task", "expression", "--run", good}, "not the similarity to a target"},
		{[]string{"--task", "topology", "--run", good, "--decodes", "0"}, "--decodes 0"},
		{[]string{"--task", "topology", "--run", good, "--decoding", "rounded"}, `--decoding "rounded": want sampled or mode`},
		{[]string{"--task", "topology", "--run", good, "--decoding", "mode", "--decodes", "5"}, "--decodes 5 with --decoding mode"},
	} {
		args := append([]string{"domain-recovery", "--out", out}, c.args...)
		if err := runAnalyze(args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
