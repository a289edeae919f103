package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
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
}
