package topology

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/simp"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

// randomDesigns returns n designs of random blocks (no SIMP solve: fast).
func randomDesigns(n int, seed uint64) []Design {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]Design, n)
	for i := range out {
		r0, c0 := rng.IntN(30), rng.IntN(30)
		out[i] = blockDesign(r0, r0+1+rng.IntN(10), c0, c0+1+rng.IntN(10))
		out[i][rng.IntN(Pixels)] = 1
	}
	return out
}

// writeDataDir writes designs as DIR/topology.npz in the format of `data
// topology` (the problems are random ones; only the images are read).
func writeDataDir(t *testing.T, designs []Design) string {
	t.Helper()
	dir := t.TempDir()
	ds := make([]simp.Design, len(designs))
	for i, d := range designs {
		ds[i] = simp.Design{Index: i, Problem: simp.RandomProblem(0, i), Image: d}
	}
	if err := simp.WriteDesigns(filepath.Join(dir, simp.DataFileName), 0, ds); err != nil {
		t.Fatal(err)
	}
	return dir
}

func testEnv(dataDir string, params task.Values) *task.Env {
	p := task.Values{optTargetSeed: 0, optN: 10000}
	for k, v := range params {
		p[k] = v
	}
	return &task.Env{Opts: p, DataDir: dataDir, Device: torch.CPU, Seed: 3, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
}

// lookup returns the registered task.
func lookup(t *testing.T) task.Task {
	t.Helper()
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// typed returns the task with its typed access (objective, data set, model).
func typed(t *testing.T) *task.Defined[Design, models.Dense] {
	t.Helper()
	return lookup(t).(targetTask).Defined
}

// TestDatasetDropsTargetCopies checks that the training data hold no copy
// of the held-out target and that the scores are the similarities with it.
func TestDatasetDropsTargetCopies(t *testing.T) {
	// Two more copies of the target of each of the first three seeds.
	designs := randomDesigns(46, 5)
	targets := map[int]bool{}
	for seed := range 3 {
		targets[targetIndex(uint64(seed), len(designs))] = true
	}
	free := 0
	for seed := range 3 {
		for range 2 {
			for targets[free] {
				free++
			}
			designs[free] = slices.Clone(designs[targetIndex(uint64(seed), len(designs))])
			free++
		}
	}
	dir := writeDataDir(t, designs)
	tk := typed(t)
	for seed := range 3 {
		env := testEnv(dir, task.Values{optTargetSeed: seed})
		ds, err := tk.Dataset(env)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := tk.Objective(env)
		if err != nil {
			t.Fatal(err)
		}
		target, err := obj.Parse(obj.Describe()["target-key"])
		if err != nil {
			t.Fatal(err)
		}
		copies := 0
		for _, d := range designs {
			if slices.Equal(d, target) {
				copies++
			}
		}
		if copies < 3 || len(ds.Objects) != len(designs)-copies {
			t.Fatalf("seed %d: %d training designs of %d with %d copies of the target", seed, len(ds.Objects), len(designs), copies)
		}
		for i, o := range ds.Objects {
			if slices.Equal(o, target) {
				t.Fatalf("seed %d: training design %d is the target", seed, i)
			}
			if s, _ := obj.Score(o); s != ds.Scores[i] || s >= 1 {
				t.Fatalf("seed %d: design %d scored %v, data set says %v", seed, i, s, ds.Scores[i])
			}
		}
		if !strings.Contains(ds.Source, strconv.Itoa(copies)+" copies of the target") {
			t.Errorf("source %q does not count the copies", ds.Source)
		}
	}
	// A target file: its copies are dropped too.
	tf := filepath.Join(t.TempDir(), "target.npy")
	if err := WriteDesigns(tf, []Design{designs[7]}, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := tk.Dataset(testEnv(dir, task.Values{optTarget: tf}))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ds.Objects {
		if slices.Equal(o, designs[7]) {
			t.Fatal("a copy of the target file's design is in the training data")
		}
	}
}

func TestDataErrors(t *testing.T) {
	tk := typed(t)
	empty := t.TempDir()
	if _, err := tk.Dataset(testEnv(empty, nil)); err == nil || !strings.Contains(err.Error(), "data topology") {
		t.Fatalf("missing data set: %v", err)
	}
	dir := writeDataDir(t, randomDesigns(10, 1))
	for name, params := range map[string]task.Values{
		"target-seed": {optTargetSeed: -1},
		"target file": {optTarget: filepath.Join(empty, "none.npy")},
		"designs":     {optDesigns: filepath.Join(empty, "none.npz")},
	} {
		if _, err := tk.Dataset(testEnv(dir, params)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// An empty target is refused: every design would score 0.
	tf := filepath.Join(empty, "empty.npy")
	if err := WriteDesigns(tf, []Design{make(Design, Pixels)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Objective(testEnv("", task.Values{optTarget: tf})); err == nil {
		t.Fatal("an empty target accepted")
	}
}

func TestScoreVerb(t *testing.T) {
	tk := typed(t)
	dir := t.TempDir()
	tf, df := filepath.Join(dir, "t.npy"), filepath.Join(dir, "d.npy")
	a, b := blockDesign(0, 10, 0, 10), blockDesign(0, 10, 5, 15)
	if err := WriteDesigns(tf, []Design{a}, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteDesigns(df, []Design{a, b, make(Design, Pixels)}, nil); err != nil {
		t.Fatal(err)
	}
	env := testEnv("", task.Values{optTarget: tf})
	if err := tk.Score(env, []string{df}); err != nil {
		t.Fatal(err)
	}
	if got := env.Stdout.(*bytes.Buffer).String(); got != "1\n0.5\n0\n" {
		t.Fatalf("score output %q, want 1, 0.5, 0", got)
	}
	if err := tk.Score(env, nil); err == nil {
		t.Fatal("score without files accepted")
	}

	// Bad inputs: a design with a pixel 2 among good ones, a missing file,
	// an array of the wrong shape. One line each, in order, the failure score
	// 0 and the reason after a tab; the error comes after every line.
	bad, shape := filepath.Join(dir, "bad.npy"), filepath.Join(dir, "shape.npy")
	px := make([]float64, 3*Pixels)
	for i, v := range a {
		px[i] = float64(v)
	}
	px[Pixels+7] = 2
	if err := numpy.WriteNPY(bad, numpy.Array{Name: "d", Shape: []int{3, Side, Side}, Data: px}); err != nil {
		t.Fatal(err)
	}
	if err := numpy.WriteNPY(shape, numpy.Array{Name: "d", Shape: []int{2, 3}, Data: make([]float64, 6)}); err != nil {
		t.Fatal(err)
	}
	env = testEnv("", task.Values{optTarget: tf})
	err := tk.Score(env, []string{bad, filepath.Join(dir, "missing.npy"), df, shape})
	if err == nil || !strings.Contains(err.Error(), "3 of 8 inputs failed") {
		t.Errorf("error %v, want 3 of 8 inputs failed", err)
	}
	got := strings.Split(strings.TrimSuffix(env.Stdout.(*bytes.Buffer).String(), "\n"), "\n")
	want := []string{"1", "0\tpixel (0, 7) is 2", "0", "0\tmissing.npy", "1", "0.5", "0", "0\tshape [2 3]"}
	if len(got) != len(want) {
		t.Fatalf("output %q, want lines like %q", got, want)
	}
	for i, w := range want {
		if score, reason, failed := strings.Cut(w, "\t"); failed {
			if !strings.HasPrefix(got[i], score+"\t") || !strings.Contains(got[i], reason) {
				t.Errorf("line %d: %q, want the failure score and a reason naming %q", i+1, got[i], reason)
			}
		} else if got[i] != w {
			t.Errorf("line %d: %q, want %q", i+1, got[i], w)
		}
	}
}

// TestTrainOptimizeFlow pretrains the conv VAE through the registry for one
// epoch on 64 designs at batch 32, then uses it as the BO loop does: encode,
// decode, retrain (with augmentation), and writes designs.png.
func TestTrainOptimizeFlow(t *testing.T) {
	tk := typed(t)
	dir := writeDataDir(t, randomDesigns(70, 2))
	env := testEnv(dir, task.Values{optDenseWidth: 32})
	elbo, err := models.ParseELBO("t")
	if err != nil {
		t.Fatal(err)
	}
	elbo.MetricWeight = 1
	out := filepath.Join(t.TempDir(), "vae.pt")
	req := task.TrainRequest{Opts: models.TrainOptions{ELBO: elbo, Beta: Defaults.Beta, LR: 1e-3, BatchSize: 32,
		Device: torch.CPU, Seed: 3}, K: 1e-3, Epochs: 1, ValFraction: 0.1, LabelledFraction: 1, Latent: 2, Out: out}
	if err := tk.Train(env, req); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seconds_per_epoch", "val_pixel_accuracy", "val_similarity", "checkpoint"} {
		if !strings.Contains(env.Stdout.(*bytes.Buffer).String(), want) {
			t.Errorf("training report lacks %s:\n%s", want, env.Stdout)
		}
	}
	m, err := tk.OpenModel(env, task.ModelRequest{Path: out, ELBO: elbo, LR: 1e-3, BatchSize: 16, GradClip: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ds, err := tk.Dataset(env)
	if err != nil {
		t.Fatal(err)
	}
	z, err := m.Encode(ds.Objects[:5])
	if err != nil || len(z.RawMatrix().Data) != 10 {
		t.Fatalf("encode: %v, %v", err, z)
	}
	objs, valid, err := m.Decode(z, 1)
	if err != nil || len(objs) != 5 || slices.Contains(valid, false) {
		t.Fatalf("decode: %v %v", err, valid)
	}
	l, err := m.Retrain(bo.RetrainRequest[Design]{Objects: ds.Objects, Scores: ds.Scores, Weights: slices.Repeat([]float64{1}, len(ds.Objects)),
		Epochs: 1, Seed: 4})
	if err != nil || math.IsNaN(l["total"]) {
		t.Fatalf("retrain: %v, %v", err, l)
	}
	best := []task.Scored[Design]{{Object: objs[0], Score: 0.5, Query: 3}, {Object: objs[1], Score: 0.4, Query: 1}}
	if err := tk.Spec().Plots(env, t.TempDir(), best); err != nil {
		t.Fatal(err)
	}
	net, _, err := conv.Load(out, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	if w := net.Config().Width(); w != 32 {
		t.Fatalf("trained with --dense-width 32: width %d", w)
	}
	png := filepath.Join(t.TempDir(), "map.png")
	if err := LatentMap(net, png, 5, 3); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("latent map: %v", err)
	}
}

// TestImport writes the authors' two checkpoint layouts (a bare state dict
// with the BaseVAE prior buffers, and Lightning's state_dict.-prefixed one
// with other entries) from a network, imports both and checks that the
// imported network encodes exactly as the original. The network's dense
// width is not the authors' 800, so the import must read it from the file.
func TestImport(t *testing.T) {
	if err := torch.ManualSeed(11); err != nil {
		t.Fatal(err)
	}
	src, err := conv.New(conv.Config{Latent: 2, DenseWidth: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	prior := []torch.Named{{Name: "prior_mu", Tensor: torch.Zeros([]int64{2}, torch.Float32, torch.CPU)},
		{Name: "prior_sigma", Tensor: torch.Ones([]int64{2}, torch.Float32, torch.CPU)}}
	defer torch.CloseNamed(prior)
	bare := append(slices.Clone(prior), src.StateDict()...)
	var lightning []torch.Named
	for _, n := range bare {
		lightning = append(lightning, torch.Named{Name: "state_dict." + n.Name, Tensor: n.Tensor})
	}
	step := torch.FromInt64([]int64{120})
	defer step.Close()
	lightning = append(lightning, torch.Named{Name: "global_step", Tensor: step})
	dir := t.TempDir()
	examples := make([]models.Dense, 0, 6)
	for _, d := range randomDesigns(6, 9) {
		x, _ := example(d)
		examples = append(examples, x)
	}
	want, err := models.EncodeMeans[models.Dense](src, examples)
	if err != nil {
		t.Fatal(err)
	}
	tk := typed(t)
	for name, sd := range map[string][]torch.Named{"bare.pt": bare, "lightning.ckpt": lightning} {
		from, out := filepath.Join(dir, name), filepath.Join(dir, "ours-"+name+".pt")
		if err := torch.Save(from, sd); err != nil {
			t.Fatal(err)
		}
		env := testEnv("", nil)
		if err := tk.Import(env, task.ImportRequest{From: from, Out: out}); err != nil {
			t.Fatal(err)
		}
		if note := env.Stderr.(*bytes.Buffer).String(); !strings.Contains(note, "prior_mu") {
			t.Errorf("%s: no note of the dropped prior buffers: %q", name, note)
		}
		net, _, err := conv.Load(out, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		got, err := models.EncodeMeans[models.Dense](net, examples)
		net.Close()
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: imported means %v (%v), want %v", name, got, err, want)
		}
	}
	// A checkpoint of another network is refused, naming the tensor.
	other := filepath.Join(dir, "other.pt")
	if err := torch.Save(other, prior); err != nil {
		t.Fatal(err)
	}
	if err := tk.Import(testEnv("", nil), task.ImportRequest{From: other, Out: filepath.Join(dir, "x.pt")}); err == nil ||
		!strings.Contains(err.Error(), lastEncoderBias) {
		t.Fatalf("import of a foreign checkpoint: %v", err)
	}
}

// TestBuildData solves two random problems through the data verb's path and
// reads them back as the data set (option designs).
func TestBuildData(t *testing.T) {
	tk := typed(t)
	dir := t.TempDir()
	env := testEnv("", task.Values{optN: 2})
	if err := tk.BuildData(env, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, simp.DataFileName)
	_, want, err := simp.ReadDesigns(path)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := allDesigns(testEnv("", task.Values{optDesigns: path}))
	if err != nil || len(all) != 2 {
		t.Fatalf("data set: %v, %d designs", err, len(all))
	}
	for i := range all {
		if !slices.Equal([]uint8(all[i]), want[i].Image) {
			t.Fatalf("design %d differs from the file's", i)
		}
	}
	if err := tk.BuildData(testEnv("", task.Values{optN: 0}), dir); err == nil {
		t.Fatal("n 0 accepted")
	}
}
