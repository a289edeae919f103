package molecule

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// testEnv is the task's env with its option defaults, an empty data
// directory and the given options.
func testEnv(t testing.TB, synthetic bool, params task.Values) *task.Env {
	t.Helper()
	env := &task.Env{Opts: task.Values{}, DataDir: t.TempDir(), Synthetic: synthetic, Device: torch.CPU, Seed: 1,
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	for _, o := range TaskSpec().Options {
		env.Opts[o.Name] = o.Zero()
	}
	for k, v := range params {
		env.Opts[k] = v
	}
	return env
}

// lookup returns the registered task, with its typed access.
func lookup(t *testing.T) *task.Defined[string, jtvae.Example] {
	t.Helper()
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	return tk.(*task.Defined[string, jtvae.Example])
}

// newTask returns a binding of its own and the task over it, so that a
// test can see what a verb bound without sharing it with other tests.
func newTask() (*binding, *task.Defined[string, jtvae.Example]) {
	b := &binding{}
	return b, task.Define(b.spec())
}

// bindOptions returns a binding of the vocabulary of env's options, as a
// verb's network would make it (bind).
func bindOptions(t *testing.T, env *task.Env) *binding {
	t.Helper()
	v, _, err := vocabulary(env)
	if err != nil {
		t.Fatal(err)
	}
	b := &binding{}
	b.bindVocab(v)
	return b
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := task.WriteLines(path, lines, slices.Repeat([]bool{true}, len(lines))); err != nil {
		t.Fatal(err)
	}
}

// TestImportEncodeMatchesAuthors imports the fixture's Lightning checkpoint
// through the registry and encodes the fixture's molecules from a SMILES
// file: featuriser, import and encoder together give the authors' encoder
// means (float32 network against their float64 run: 1e-4).
func TestImportEncodeMatchesAuthors(t *testing.T) { importEncodeMatchesAuthors(t, torch.CPU) }

// TestImportEncodeMatchesAuthorsCUDA is TestImportEncodeMatchesAuthors with
// the encoder on the GPU.
func TestImportEncodeMatchesAuthorsCUDA(t *testing.T) { importEncodeMatchesAuthors(t, cudaDevice(t)) }

// cudaDevice returns the first CUDA device, or skips the test without one.
func cudaDevice(t *testing.T) torch.Device {
	if !torch.CUDAAvailable() {
		t.Skip("no CUDA device seen")
	}
	return torch.CUDA(0)
}

func importEncodeMatchesAuthors(t *testing.T, dev torch.Device) {
	tk := lookup(t)
	dir := t.TempDir()
	env := testEnv(t, false, task.Values{optVocab: testVocab(t)})
	ckpt := filepath.Join(dir, "imported.pt")
	if err := tk.Import(env, task.ImportRequest{From: "../../../testdata/jtvae/parity.ckpt", Out: ckpt}); err != nil {
		t.Fatal(err)
	}
	arrays, err := numpy.ReadNPZ("../../../testdata/jtvae/parity.npz")
	if err != nil {
		t.Fatal(err)
	}
	var smiles []string
	var mean []float64
	for _, a := range arrays {
		switch a.Name {
		case "smiles":
			smiles = a.Data.([]string)
		case "mean":
			if mean, err = a.Float64s(); err != nil {
				t.Fatal(err)
			}
		}
	}
	in, out := filepath.Join(dir, "in.smi"), filepath.Join(dir, "z.npy")
	writeLines(t, in, smiles)
	// the second time with the vocabulary file in another order: the
	// featuriser's labels are mapped onto the checkpoint's vocabulary
	v, err := ReadVocab(testVocab(t))
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(v)
	reversed := filepath.Join(dir, "reversed.txt")
	writeLines(t, reversed, v)
	// without --vocab: the checkpoint's own vocabulary
	for _, vocab := range []string{"", testVocab(t), reversed} {
		env := testEnv(t, false, task.Values{optVocab: vocab})
		env.Device = dev
		if err := tk.Encode(env, task.EncodeRequest{VAE: ckpt, In: in, Out: out}); err != nil {
			t.Fatal(err)
		}
		z, err := numpy.ReadNPY(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := z.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(mean) || z.Shape[0] != len(smiles) {
			t.Fatalf("encoded shape %v, want (%d, %d)", z.Shape, len(smiles), len(mean)/len(smiles))
		}
		worst := 0.0
		for i := range got {
			worst = max(worst, math.Abs(got[i]-mean[i])/math.Max(1, math.Abs(mean[i])))
		}
		if worst > 1e-4 {
			t.Errorf("--vocab %s: encoder means differ from the authors' by up to %.3g", filepath.Base(vocab), worst)
		}
		t.Logf("--vocab %s: %d molecules, largest difference %.2g", filepath.Base(vocab), len(smiles), worst)
	}
	// A --vocab that is not the checkpoint's is refused, named.
	short := filepath.Join(dir, "short.txt")
	writeLines(t, short, v[1:])
	err = tk.Encode(testEnv(t, false, task.Values{optVocab: short}), task.EncodeRequest{VAE: ckpt, In: in, Out: out})
	if err == nil || !strings.Contains(err.Error(), "--vocab "+short) || !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("encode with another vocabulary: %v, want an error naming --vocab", err)
	}
}

// TestTrainSynthetic pretrains a tiny JT-VAE (hidden 16, the sample's own
// vocabulary) on the built-in sample through the registry, then encodes
// and decodes with the checkpoint: each decode is a molecule or invalid.
func TestTrainSynthetic(t *testing.T) {
	tk := lookup(t)
	env := testEnv(t, true, task.Values{optHidden: 16})
	elbo, err := models.ParseELBO("t")
	if err != nil {
		t.Fatal(err)
	}
	elbo.MetricWeight, elbo.Metric.Eta, elbo.PredWeight = 1, models.DefaultEta, 1
	out := filepath.Join(t.TempDir(), "tiny.pt")
	req := task.TrainRequest{
		Opts: models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(1e-3), LR: 1e-3, BatchSize: 8, GradClip: 20,
			Device: torch.CPU, Seed: 1},
		K: math.Inf(1), Epochs: 1, ValFraction: 0.25, LabelledFraction: 1, Out: out,
		Report: task.ReportOptions{PriorSamples: 4},
	}
	if err := tk.Train(env, req); err != nil {
		t.Fatal(err)
	}
	checkReport(t, env.Stdout.(*bytes.Buffer).String())
	net, h, err := jtvae.Load(out, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	if cfg := net.Config(); cfg.Hidden != 16 || cfg.Latent != 56 || h.Training == nil {
		t.Errorf("checkpoint config %+v, training %v", cfg, h.Training)
	}
	in, z := filepath.Join(t.TempDir(), "in.smi"), filepath.Join(t.TempDir(), "z.npy")
	writeLines(t, in, sampleSmiles[:3])
	if err := tk.Encode(env, task.EncodeRequest{VAE: out, In: in, Out: z}); err != nil {
		t.Fatal(err)
	}
	if a, err := numpy.ReadNPY(z); err != nil || !slices.Equal(a.Shape, []int{3, 56}) {
		t.Errorf("encoded %v, %v", a.Shape, err)
	}
	// A molecule the network cannot take (RDKit cannot kekulize its
	// fragments) fails the file, naming it, unless SkipInvalid writes a row
	// of NaN for it.
	bad, zb := filepath.Join(t.TempDir(), "bad.smi"), filepath.Join(t.TempDir(), "zb.npy")
	writeLines(t, bad, []string{sampleSmiles[0], "Cc1cccn2c(=O)c(C(=O)NC[C@H]3CCO[C@@H]3C(C)C)cnc12", sampleSmiles[1]})
	if err := tk.Encode(env, task.EncodeRequest{VAE: out, In: bad, Out: zb}); err == nil || !strings.Contains(err.Error(), "object 2:") {
		t.Errorf("encode of an unkekulizable molecule (the second): %v, want an error naming object 2", err)
	}
	if err := tk.Encode(env, task.EncodeRequest{VAE: out, In: bad, Out: zb, SkipInvalid: true}); err != nil {
		t.Fatal(err)
	}
	good, err1 := numpy.ReadNPY(z)
	skip, err2 := numpy.ReadNPY(zb)
	if err1 != nil || err2 != nil || !slices.Equal(skip.Shape, []int{3, 56}) {
		t.Fatalf("SkipInvalid: %v %v %v", skip.Shape, err1, err2)
	}
	// The two files encode the same molecules in batches of 3 and 2 rows:
	// another GEMM shape, so another summation order on some OpenBLAS kernels
	// (issue 49). The network is float32 (unit roundoff 6e-8) and each latent
	// coordinate sums products of order 1 over at most a few hundred terms per
	// layer, so the rows agree to about 1e-5, far below what a wrong row or a
	// shifted one would move (encodings of distinct molecules differ by 1e-2).
	const f32Tol = 1e-5
	g, w := skip.Data.([]float64), good.Data.([]float64)
	for j := 0; j < 56; j++ {
		if math.Abs(g[j]-w[j]) > f32Tol || !math.IsNaN(g[56+j]) || math.Abs(g[112+j]-w[56+j]) > f32Tol {
			t.Fatalf("SkipInvalid: column %d: rows %v %v %v, want %v NaN %v", j, g[j], g[56+j], g[112+j], w[j], w[56+j])
		}
	}
	decoded := filepath.Join(t.TempDir(), "out.smi")
	if err := tk.Decode(env, task.DecodeRequest{VAE: out, In: z, Out: decoded}); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(decoded)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(lines), "\n"), "\n")
	if len(got) != 3 {
		t.Fatalf("decoded %q, want 3 lines", got)
	}
	for _, s := range got {
		if s == "" {
			continue
		}
		if m, err := chem.Smiles(s); err != nil {
			t.Errorf("decoded %q: %v", s, err)
		} else {
			m.Close()
		}
	}
	sampled, valid, err := TaskSpec().Decode(net, make([]float64, 2*56), task.DecodeOptions{Attempts: 3}, 1)
	if err != nil || len(sampled) != 2 || len(valid) != 2 {
		t.Errorf("stochastic decoding: %q %v %v", sampled, valid, err)
	}
	checkAccept(t, tk, env, out)
}

// unkekulizable is a molecule a JT-VAE decoded in a BO run: valid, but its
// junction tree cannot be built (a ring fragment fails kekulization).
const unkekulizable = "CC1(C)CC(=O)Cc2cc3cc(OC(=O)c4ccc5[nH]ccc5c4)ccc3n21"

// checkAccept checks the BO model's verdicts: a molecule of the data is
// accepted, one whose tree cannot be built is refused with the reason, the
// same way when asked again, and a retraining that includes it fails.
func checkAccept(t *testing.T, tk *task.Defined[string, jtvae.Example], env *task.Env, ckpt string) {
	t.Helper()
	elbo, _ := models.ParseELBO("lbo")
	m, err := tk.OpenModel(env, task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Accept(sampleSmiles[0]); err != nil {
		t.Errorf("Accept(%s): %v", sampleSmiles[0], err)
	}
	first := m.Accept(unkekulizable)
	if first == nil || !strings.Contains(first.Error(), "kekulize") {
		t.Errorf("Accept(%s) = %v, want a kekulization error", unkekulizable, first)
	}
	if again := m.Accept(unkekulizable); again != first {
		t.Errorf("asked again: %v, want the remembered %v", again, first)
	}
	req := bo.RetrainRequest[string]{Objects: []string{sampleSmiles[0], unkekulizable}, Scores: []float64{1, 2},
		Weights: []float64{1, 1}, Epochs: 1, Seed: 1}
	if _, err := m.Retrain(req); err == nil {
		t.Error("retraining on a refused molecule succeeded")
	}
}

func TestDatasetFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), DataFileName)
	err := numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{4}, Data: []string{"CCO", "CCN", "c1ccccc1", "xx"}},
		{Name: "canonical", Shape: []int{4}, Data: []string{"CCO", "CCN", "c1ccccc1", ""}},
		{Name: "score", Shape: []int{4}, Data: []float64{1, 2, 3, FailureScore}},
		{Name: "split", Shape: []int{4}, Data: []int64{0, 1, 0, 0}},
		{Name: "ok", Shape: []int{4}, Data: []bool{true, true, true, false}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, y, _, err := (&binding{}).dataset(testEnv(t, false, task.Values{optMolecules: path}))
	if err != nil || !slices.Equal(s, []string{"CCO", "c1ccccc1"}) || !slices.Equal(y, []float64{1, 3}) {
		t.Errorf("dataset: %v %v %v", s, y, err)
	}
	if _, _, _, err := (&binding{}).dataset(testEnv(t, false, task.Values{optMolecules: filepath.Join(t.TempDir(), "none.npz")})); err == nil {
		t.Error("missing data set without --synthetic-data: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.npz")
	if err := numpy.WriteNPZ(bad, []numpy.Array{{Name: "smiles", Shape: []int{1}, Data: []string{"C"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := readTrainSplit(bad); err == nil {
		t.Error("data set without scores: no error")
	}
}

func TestSmilesFilesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.smi")
	if err := task.WriteLines(path, []string{"CCO", "", "c1ccccc1"}, []bool{true, false, true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "CCO\n\nc1ccccc1\n" {
		t.Fatalf("%q %v", b, err)
	}
	got, err := ReadSmiles(path)
	if err != nil || !slices.Equal(got, []string{"CCO", "c1ccccc1"}) {
		t.Errorf("read back %v %v", got, err)
	}
}

func TestObjectiveKey(t *testing.T) {
	var o Objective
	if a, b := o.Key("OCC"), o.Key("C(O)C"); a != b || a != "CCO" {
		t.Errorf("keys %q %q, want CCO", a, b)
	}
	if s, err := o.Score("not a smiles"); err == nil || s != FailureScore {
		t.Errorf("bad SMILES: %v %v", s, err)
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(t, false, nil)
	best := []task.Scored[string]{{Object: "CCO", Score: -0.26, Query: 3}, {Object: "c1ccccc1", Score: 2.09, Query: 7}}
	if err := lookup(t).Spec().Plots(env, dir, best); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, MoleculesPlot))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() < 2*b.Dy() {
		t.Fatalf("picture of two molecules side by side is %v", b)
	}
	// Below the titles, each half holds a drawing (dark pixels), in the
	// order given: ethanol's oxygen is drawn in RDKit's red on the left,
	// benzene, with no heteroatom, has none on the right.
	ink := func(x0, x1 int) (dark, red int) {
		for y := b.Min.Y + b.Dy()/6; y < b.Max.Y; y++ {
			for x := x0; x < x1; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				switch {
				case r < 0x4000 && g < 0x4000 && bl < 0x4000:
					dark++
				case r > 0xc000 && g < 0x4000 && bl < 0x4000:
					red++
				}
			}
		}
		return dark, red
	}
	mid := b.Min.X + b.Dx()/2
	leftDark, leftRed := ink(b.Min.X, mid)
	rightDark, rightRed := ink(mid, b.Max.X)
	if leftDark == 0 || rightDark == 0 || leftRed == 0 || rightRed != 0 {
		t.Errorf("left half: %d dark and %d red pixels, right half: %d and %d; want ethanol (bonds and a red O) left, benzene (bonds, no red) right",
			leftDark, leftRed, rightDark, rightRed)
	}
}

// checkReport checks the report lines after training: a share in [0, 1]
// for the reconstruction and the prior validity.
func checkReport(t *testing.T, out string) {
	t.Helper()
	for _, key := range []string{"val_reconstruction_greedy", "prior_validity"} {
		var v float64
		i := strings.Index(out, key+" ")
		if i < 0 {
			t.Errorf("no %s line in the training output:\n%s", key, out)
			continue
		}
		if _, err := fmt.Sscan(out[i+len(key):], &v); err != nil || v < 0 || v > 1 {
			t.Errorf("%s: %v, %v", key, v, err)
		}
	}
}

func TestSameMolecule(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"C[C@H](N)O", "CC(N)O", true}, // stereochemistry aside
		{"c1ccccc1", "C1=CC=CC=C1", true},
		{"CCO", "CCN", false},
		{"", "CCO", false},
		{"C1CC", "C1CC", false}, // does not parse
	} {
		if got := sameMolecule(c.a, c.b); got != c.want {
			t.Errorf("sameMolecule(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestDecodeWidth: greedy decoding reports its workers (one per CPU for 0)
// as the loop's decode width, sampled decoding none, since its rows draw
// from the seed's stream for their place in a call.
func TestDecodeWidth(t *testing.T) {
	for _, c := range []struct {
		workers int
		opts    task.DecodeOptions
		want    int
	}{
		{3, task.DecodeOptions{Greedy: true}, 3},
		{3, task.DecodeOptions{}, 3},
		{0, task.DecodeOptions{Greedy: true, Attempts: 5}, workerCount(0, math.MaxInt)},
		{3, task.DecodeOptions{Attempts: 5}, 0},
	} {
		b := &binding{workers: c.workers}
		if got := b.decodeWidth(c.opts); got != c.want {
			t.Errorf("workers %d, %+v: width %d, want %d", c.workers, c.opts, got, c.want)
		}
	}
}
