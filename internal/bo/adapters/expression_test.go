package adapters

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/models/weighting"
	"github.com/tlbo-native/tlbo-native/torch"
	"gonum.org/v1/gonum/mat"
)

// untrained saves a freshly initialised grammar VAE and loads it as a
// bo.Model with the T-LBO ELBO.
func untrained(t *testing.T) (*ExpressionModel, string) {
	t.Helper()
	if err := torch.ManualSeed(1); err != nil {
		t.Fatal(err)
	}
	net, err := gvae.New(gvae.DefaultConfig(ExpressionGrammar()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vae.pt")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	net.Close()
	elbo, err := models.ParseELBO("t")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewExpressionModel(path, ExpressionOptions{ELBO: elbo, Attempts: 5, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, path
}

// smallData returns n generated expressions and their scores.
func smallData(t *testing.T, n int) (ExpressionTask, bo.Data[string]) {
	t.Helper()
	obj, err := expression.NewObjective("")
	if err != nil {
		t.Fatal(err)
	}
	var d bo.Data[string]
	for _, e := range expression.Generate(n, 3) {
		c, err := Canonical(e)
		if err != nil {
			t.Fatal(err)
		}
		d.Objects = append(d.Objects, c)
		d.Scores = append(d.Scores, obj.Score(c))
	}
	return ExpressionTask{Objective: obj}, d
}

func TestExpressionTaskKeys(t *testing.T) {
	task := ExpressionTask{}
	key := task.Key("x + sin( x * 2 ) / 3")
	if key != "x+sin(x*2)/3" {
		t.Errorf("key %q", key)
	}
	back, err := task.Parse(key)
	if err != nil || back != "x + sin( x * 2 ) / 3" {
		t.Errorf("Parse(%q) = %q, %v", key, back, err)
	}
	if _, err := task.Parse("x +"); err == nil {
		t.Error("Parse accepted an incomplete expression")
	}
}

func TestExpressionModel(t *testing.T) {
	m, _ := untrained(t)
	task, data := smallData(t, 300)
	z, err := m.Encode(data.Objects[:4])
	if err != nil {
		t.Fatal(err)
	}
	if r, c := z.Dims(); r != 4 || c != 25 {
		t.Fatalf("encoded %d x %d, want 4 x 25", r, c)
	}
	objs, valid, err := m.Decode(z, 7)
	if err != nil {
		t.Fatal(err)
	}
	again, _, _ := m.Decode(z, 7)
	for i := range objs {
		if objs[i] != again[i] {
			t.Errorf("decoding row %d twice with one seed: %q then %q", i, objs[i], again[i])
		}
		if valid[i] {
			if _, err := task.Parse(task.Key(objs[i])); err != nil {
				t.Errorf("decoded %q does not parse back: %v", objs[i], err)
			}
		}
	}
	if _, _, err := m.Decode(mat.NewDense(1, 3, nil), 1); err == nil {
		t.Error("decoded 3-dimensional latent points")
	}

	// Retraining changes the encoder; Save then Load restores it exactly.
	w, err := weighting.RankWeights(negate(data.Scores), 1e-3, true)
	if err != nil {
		t.Fatal(err)
	}
	req := bo.RetrainRequest[string]{Objects: data.Objects, Scores: data.Scores, Weights: w, Epochs: 1, Seed: 3, Version: 1}
	if err := m.Retrain(req); err != nil {
		t.Fatal(err)
	}
	z2, _ := m.Encode(data.Objects[:4])
	if mat.Equal(z, z2) {
		t.Error("retraining left the encoder unchanged")
	}
	path := filepath.Join(t.TempDir(), "v1.pt")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := m.Retrain(req); err != nil {
		t.Fatal(err)
	}
	if err := m.Load(path); err != nil {
		t.Fatal(err)
	}
	z3, _ := m.Encode(data.Objects[:4])
	if !mat.EqualApprox(z2, z3, 1e-6) {
		t.Error("Load did not restore the saved encoder")
	}
	if _, err := m.Encode([]string{"x +"}); err == nil {
		t.Error("encoded an incomplete expression")
	}
}

func negate(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// TestExpressionRun runs a few queries of the real loop on an untrained
// network and resumes it: the wiring end to end, on CPU.
func TestExpressionRun(t *testing.T) {
	m, _ := untrained(t)
	task, data := smallData(t, 300)
	cfg := bo.DefaultConfig()
	cfg.Budget, cfg.RetrainEvery = 4, 2
	cfg.InitialRetrainEpochs, cfg.RetrainEpochs = 0.2, 0.2
	cfg.NBest, cfg.NRand, cfg.Inducing = 50, 20, 20
	cfg.RawSamples, cfg.Restarts = 128, 2
	dir := t.TempDir()
	res, err := bo.Run[string](cfg, task, m, data, bo.Options{Dir: dir, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 4 || len(res.Versions) != 2 {
		t.Fatalf("%d queries in %d versions, want 4 in 2", len(res.Queries), len(res.Versions))
	}
	for _, q := range res.Queries {
		t.Logf("query %d: %q score %.4g valid %v perturbations %d", q.Index, q.Object, q.Score, q.Valid, q.Perturbations)
		if q.Valid && math.Abs(task.Objective.Score(q.Object)-q.Score) > 0 {
			t.Errorf("query %d: journaled score %v differs from the objective", q.Index, q.Score)
		}
	}
	cfg.Budget = 5
	m2, _ := untrained(t)
	res2, err := bo.Run[string](cfg, task, m2, data, bo.Options{Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Resumed != 4 || len(res2.Queries) != 5 {
		t.Errorf("resumed %d of %d queries, want 4 of 5", res2.Resumed, len(res2.Queries))
	}
}
