package expression

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/torch"
)

// tinyDataDir writes a data directory holding n grammar-sampled expressions.
func tinyDataDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "expression"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(Generate(n, 1), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "expression", DataFileName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func testEnv(t *testing.T, dataDir string) *task.Env {
	return &task.Env{Opts: task.Values{optTarget: DefaultTarget}, DataDir: dataDir, Device: torch.CPU, Seed: 3,
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
}

// trainTiny pretrains the grammar VAE through the registry for two epochs
// with TP-LBO on a small data set and returns the checkpoint path.
func trainTiny(t *testing.T, tk task.Task, env *task.Env) string {
	t.Helper()
	elbo, err := models.ParseELBO("tp")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "gvae.pt")
	req := task.TrainRequest{Opts: models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(1e-3), LR: 1e-3, BatchSize: 32,
		Device: torch.CPU, Seed: 3}, K: 1e-3, Epochs: 2, ValFraction: 0.1, LabelledFraction: 1, Out: out,
		Report: task.ReportOptions{PriorSamples: 20, Decode: task.DecodeOptions{Attempts: 2}}}
	if err := tk.Train(env, req); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seconds_per_epoch", "val_reconstruction_greedy", "prior_validity", "checkpoint"} {
		if !strings.Contains(env.Stdout.(*bytes.Buffer).String(), want) {
			t.Errorf("training report lacks %s:\n%s", want, env.Stdout)
		}
	}
	// Resuming to 3 epochs continues from the checkpoint's counters.
	req.Epochs, req.Resume = 3, true
	if err := tk.Train(env, req); err != nil {
		t.Fatal(err)
	}
	h, err := models.ReadHeader(out, gvae.NetworkKind)
	if err != nil || h.Training == nil || h.Training.Epoch != 3 {
		t.Fatalf("resumed training: header %+v, %v", h.Training, err)
	}
	// Another ELBO given explicitly is refused.
	req.Opts.ELBO.Name, req.Given = "lbo", func(flag string) bool { return flag == "elbo" }
	if err := tk.Train(env, req); err == nil || !strings.Contains(err.Error(), "--elbo lbo (the training's: tp)") {
		t.Errorf("resume with another ELBO: %v", err)
	}
	return out
}

// TestRegisteredTask exercises the expression task through the registry:
// pretraining with resume, the BO loop's model (encode, seeded decode,
// retraining that keeps the target-prediction head, save and load), the
// encode and decode verbs and a missing data set.
func TestRegisteredTask(t *testing.T) {
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	typed := tk.(*task.Defined[string, models.Dense])
	env := testEnv(t, tinyDataDir(t, 400))
	ckpt := trainTiny(t, tk, env)

	ds, err := typed.Dataset(env)
	if err != nil {
		t.Fatal(err)
	}
	elbo, _ := models.ParseELBO("tp")
	m, err := typed.OpenModel(env, task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 32,
		Decode: task.DecodeOptions{Attempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	objs := ds.Objects[:20]
	z, err := m.Encode(objs)
	if err != nil || len(z.RawMatrix().Data) != 20*m.LatentDim() {
		t.Fatalf("encode: %v, %v", z, err)
	}
	a, va, err := m.Decode(z, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, vb, err := m.Decode(z, 7)
	if err != nil || !slices.Equal(a, b) || !slices.Equal(va, vb) {
		t.Fatalf("decoding with one seed differs: %v", err)
	}
	for i, o := range a {
		if va[i] {
			if _, err := Canonical(o); err != nil {
				t.Errorf("decoded %q: %v", o, err)
			}
		}
	}
	weights := make([]float64, len(ds.Objects))
	for i := range weights {
		weights[i] = 1
	}
	l, err := m.Retrain(bo.RetrainRequest[string]{Objects: ds.Objects, Scores: ds.Scores, Weights: weights, Epochs: 0.5, Seed: 1})
	if err != nil || l["pred"] == 0 {
		t.Fatalf("retrain: losses %+v, %v", l, err)
	}
	after, _ := m.Encode(objs)
	if slices.Equal(z.RawMatrix().Data, after.RawMatrix().Data) {
		t.Error("retraining did not change the encoder")
	}
	saved := filepath.Join(t.TempDir(), "v1.pt")
	if err := m.Save(saved); err != nil {
		t.Fatal(err)
	}
	sd, err := torch.Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	hasPredictor := slices.ContainsFunc(sd, func(n torch.Named) bool { return strings.HasPrefix(n.Name, models.PredictorPrefix) })
	torch.CloseNamed(sd)
	if !hasPredictor {
		t.Error("a model version does not keep the target-prediction head")
	}
	if _, err := m.Retrain(bo.RetrainRequest[string]{Objects: ds.Objects, Scores: ds.Scores, Weights: weights, Epochs: 0.5, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	if err := m.Load(saved); err != nil {
		t.Fatal(err)
	}
	reloaded, _ := m.Encode(objs)
	if !slices.Equal(after.RawMatrix().Data, reloaded.RawMatrix().Data) {
		t.Error("loading a saved version does not restore its encoder")
	}
	retrainStopped(t, typed, env, ckpt, ds.Objects, ds.Scores, weights)

	// The encode and decode verbs.
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("x + 1\nsin( x ) * 2\n\n(x)/3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zpath, out := filepath.Join(dir, "z.npy"), filepath.Join(dir, "out.txt")
	if err := tk.Encode(env, task.EncodeRequest{VAE: ckpt, In: in, Out: zpath}); err != nil {
		t.Fatal(err)
	}
	arr, err := numpy.ReadNPY(zpath)
	if err != nil || !slices.Equal(arr.Shape, []int{3, 25}) {
		t.Fatalf("z.npy: shape %v, %v", arr.Shape, err)
	}
	if err := tk.Decode(env, task.DecodeRequest{VAE: ckpt, In: zpath, Out: out, Decode: task.DecodeOptions{Greedy: true}}); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(out)
	if err != nil || strings.Count(string(lines), "\n") != 3 {
		t.Errorf("decoded file %q, %v", lines, err)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("x +\n"), 0o644)
	// A line outside the grammar is one object the network cannot take
	// (encode --skip-invalid skips it), named with its place and error.
	if err := tk.Encode(env, task.EncodeRequest{VAE: ckpt, In: bad, Out: zpath}); err == nil ||
		!strings.Contains(err.Error(), `bad.txt: object 1: expression "x +"`) {
		t.Errorf("bad expression: %v", err)
	}
	nan := filepath.Join(dir, "nan.npy")
	numpy.WriteNPY(nan, numpy.Array{Shape: []int{1, 25}, Data: append([]float64{math.NaN()}, make([]float64, 24)...)})
	if err := tk.Decode(env, task.DecodeRequest{VAE: ckpt, In: nan, Out: out}); err == nil || !strings.Contains(err.Error(), "row 0 column 0 is NaN") {
		t.Errorf("NaN latent: %v", err)
	}
}

// TestImportPythonStateDict imports a grammar VAE state dict written by
// Python's torch.save (bare and in a Lightning checkpoint) and checks that
// encoding gives the same means as the network loaded directly (1e-6).
func TestImportPythonStateDict(t *testing.T) {
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv(t, "")
	sd, err := torch.Load("../../../testdata/models/gvae_state.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	direct, err := gvae.New(gvae.DefaultConfig(Grammar()))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	x, err := Encode("sin( x ) + 3")
	if err != nil {
		t.Fatal(err)
	}
	want, err := direct.EncodeMeans(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"gvae_state.pt", "gvae_lightning.ckpt"} {
		out := filepath.Join(t.TempDir(), "imported.pt")
		err := tk.Import(env, task.ImportRequest{From: filepath.Join("../../../testdata/models", from), Out: out})
		if err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		m, _, err := gvae.Load(out, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.EncodeMeans(x)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Fatalf("%s: mean %d is %v after import, %v before", from, i, got[i], want[i])
			}
		}
	}
	if err := tk.Import(env, task.ImportRequest{From: "../../../testdata/torch/py_state_dict.pt", Out: filepath.Join(t.TempDir(), "x.pt")}); err == nil ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("importing another network's state dict: %v", err)
	}
}

// retrainStopped: a retraining whose run has been stopped (SIGINT: the
// context has ended) takes no step and says why, the network as it was;
// before, a task that featurises nothing ran every step of the retraining
// first.
func retrainStopped(t *testing.T, typed *task.Defined[string, models.Dense], env *task.Env, ckpt string,
	objs []string, scores, weights []float64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := *env
	stopped.Ctx = ctx
	elbo, _ := models.ParseELBO("tp")
	m, err := typed.OpenModel(&stopped, task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before, err := m.Encode(objs[:20])
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Retrain(bo.RetrainRequest[string]{Objects: objs, Scores: scores, Weights: weights, Epochs: 2, Seed: 1})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("retraining of a stopped run: %v, want a stop", err)
	}
	if after, _ := m.Encode(objs[:20]); !slices.Equal(before.RawMatrix().Data, after.RawMatrix().Data) {
		t.Error("a stopped retraining changed the encoder")
	}
	// An encoding of more than one chunk (4,096 expressions, the task's
	// encoding batch) stops at the second; before, it ran to its end.
	many := make([]string, 4097)
	for i := range many {
		many[i] = objs[i%len(objs)]
	}
	if _, err := m.Encode(many); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after 4096 of 4097") {
		t.Errorf("encoding 4,097 expressions in a stopped run: %v, want a stop after the first chunk", err)
	}
}
