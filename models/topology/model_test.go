package topology

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/fixture"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// hashUniform returns n numbers in [0, 1) from an integer hash of (name,
// index), as uniform() of testdata/topology/gen_conv_vae_fixture.py.
func hashUniform(name string, n int) []float64 {
	h := fnv.New32a()
	h.Write([]byte(name))
	k := h.Sum32()
	out := make([]float64, n)
	for i := range out {
		x := uint32(i+1)*0x9E3779B1 + k*0x85EBCA77
		x ^= x >> 15
		x *= 0x2C1B3C6D
		x ^= x >> 12
		x *= 0x297A2D39
		x ^= x >> 15
		out[i] = float64(x) / (1 << 32)
	}
	return out
}

// fillValues is fill() of the fixture script: the value of a state-dict
// tensor of the given name and shape.
func fillValues(name string, shape []int64) []float32 {
	n := 1
	for _, s := range shape {
		n *= int(s)
	}
	u := hashUniform(name, n)
	v := make([]float32, n)
	for i, x := range u {
		switch {
		case strings.HasSuffix(name, "running_var"):
			v[i] = float32(0.5 + 1.5*x)
		case strings.HasSuffix(name, "running_mean"), strings.HasSuffix(name, "bias"):
			v[i] = float32(0.2 * (2*x - 1))
		case len(shape) == 1:
			v[i] = float32(0.5 + x)
		default:
			v[i] = float32((2*x - 1) / math.Sqrt(float64(n)/float64(shape[0])))
		}
	}
	return v
}

// fixtureModel returns the network of the fixture script: latent 20 with
// every tensor filled by fillValues.
func fixtureModel(t *testing.T) *Model {
	t.Helper()
	m, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	var sd []torch.Named
	for _, n := range m.StateDict() {
		if strings.HasSuffix(n.Name, "num_batches_tracked") {
			sd = append(sd, torch.Named{Name: n.Name, Tensor: torch.Zeros(nil, torch.Int64, torch.CPU)})
			continue
		}
		sd = append(sd, torch.Named{Name: n.Name, Tensor: torch.FromFloat32(fillValues(n.Name, n.Tensor.Shape()), n.Tensor.Shape()...)})
	}
	defer torch.CloseNamed(sd)
	if err := m.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	return m
}

// fixturePath is the parity fixture of gen_conv_vae_fixture.py.
const fixturePath = "../../testdata/topology/conv_vae_io.npz"

// loadFixture reads the arrays of an .npz fixture as tensors by name (the
// torch package directly, so that the test does not depend on a helper).
func loadFixture(t *testing.T, path string) map[string]*torch.Tensor {
	t.Helper()
	named, err := torch.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { torch.CloseNamed(named) })
	out := map[string]*torch.Tensor{}
	for _, n := range named {
		out[n.Name] = n.Tensor
	}
	return out
}

// values returns a tensor's values as float64; the test fails on an error.
func values(t *testing.T, x *torch.Tensor) []float64 {
	t.Helper()
	if x == nil {
		t.Fatal("missing tensor")
	}
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStateDictNames checks the authors' nn.Sequential names and shapes
// (docs/design.md section 3), which the fixture script checks against their code.
func TestStateDictNames(t *testing.T) {
	m, err := New(Config{Latent: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	shapes := map[string][]int64{}
	for _, n := range m.StateDict() {
		shapes[n.Name] = n.Tensor.Shape()
	}
	want := map[string][]int64{
		"encoder.0.weight": {16, 1, 3, 3}, "encoder.3.running_var": {32}, "encoder.15.weight": {128, 128, 3, 3},
		"encoder.18.weight": {800, 3200}, "encoder.20.weight": {4, 800}, "encoder.20.bias": {4},
		"decoder.0.weight": {800, 2}, "decoder.2.weight": {3200, 800}, "decoder.7.weight": {128, 64, 3, 3},
		"decoder.18.num_batches_tracked": {}, "decoder.20.weight": {16, 1, 3, 3}, "decoder.20.bias": {1},
	}
	for name, w := range want {
		got, ok := shapes[name]
		if !ok || len(got) != len(w) {
			t.Fatalf("%s: shape %v (present %v), want %v", name, got, ok, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("%s: shape %v, want %v", name, got, w)
			}
		}
	}
	// 7 convolutions, 7 transposed ones and 4 linear layers (weight and
	// bias), 6 batch norms (5 tensors each).
	if len(shapes) != 2*18+5*6 {
		t.Fatalf("%d tensors, want %d", len(shapes), 2*18+5*6)
	}
}

// TestMatchesPyTorch compares encoder outputs, logits, the MSE loss and the
// rounded decodes in evaluation mode, and in training mode the outputs,
// gradients and batch-norm statistics, with the PyTorch network of the
// fixture script (same weights). Tolerance: 1e-5 of the largest magnitude
// (float32), gradients 1e-4.
func TestMatchesPyTorch(t *testing.T) {
	fx := loadFixture(t, fixturePath)
	m := fixtureModel(t)
	sc := torch.NewScope()
	defer sc.Close()
	x, z := sc.Own(fx["x"].Clone()), sc.Own(fx["z"].Clone())
	b := models.DenseBatch{X: x}

	m.SetTraining(false)
	torch.NoGrad(func() {
		mu, s := m.EncodeParams(b)
		fixture.CloseScaled(t, "eval mu", values(t, mu), values(t, fx["eval_mu"]), 1e-5)
		fixture.CloseScaled(t, "eval log-std", values(t, s), values(t, fx["eval_log_std"]), 1e-5)
		fixture.CloseScaled(t, "eval logits", values(t, m.Logits(z)), values(t, fx["eval_logits"]), 1e-5)
		fixture.CloseScaled(t, "eval rec", values(t, m.ReconstructionLoss(z, b)), values(t, fx["eval_rec"]), 1e-5)
	})
	zs := values(t, z)
	probs, err := m.DecodeProbs(zs)
	if err != nil {
		t.Fatal(err)
	}
	designs, err := m.Decode(zs)
	if err != nil {
		t.Fatal(err)
	}
	want := values(t, fx["eval_decoded"])
	if len(designs) != 8 {
		t.Fatalf("%d designs decoded, want 8", len(designs))
	}
	for i, d := range designs {
		for j, v := range d {
			// Pixels within 1e-4 of 0.5 may round either way in float32.
			if p := probs[i*Pixels+j]; math.Abs(float64(p)-0.5) > 1e-4 && float64(v) != want[i*Pixels+j] {
				t.Fatalf("design %d pixel %d: %d (p %.6f), want %v", i, j, v, p, want[i*Pixels+j])
			}
		}
	}

	m.SetTraining(true)
	mu, s := m.EncodeParams(b)
	rec := m.ReconstructionLoss(z, b)
	fixture.CloseScaled(t, "train mu", values(t, mu), values(t, fx["train_mu"]), 1e-5)
	fixture.CloseScaled(t, "train log-std", values(t, s), values(t, fx["train_log_std"]), 1e-5)
	fixture.CloseScaled(t, "train rec", values(t, rec), values(t, fx["train_rec"]), 1e-5)
	if err := rec.Add(mu.Sum()).Add(s.Square().Sum()).Backward(); err != nil {
		t.Fatal(err)
	}
	state := map[string]*torch.Tensor{}
	for _, n := range m.StateDict() {
		state[n.Name] = n.Tensor
	}
	checked := 0
	for name, want := range fx {
		prefix, param, _ := strings.Cut(name, "/")
		switch prefix {
		case "grad", "gradcorner":
			g, err := state[param].Grad()
			if err != nil || g == nil {
				t.Fatalf("%s: no gradient (%v)", name, err)
			}
			g = sc.Own(g)
			if prefix == "gradcorner" {
				ws := want.Shape()
				g = g.Narrow(0, 0, ws[0]).Narrow(1, 0, ws[1])
			}
			fixture.CloseScaled(t, name, values(t, g), values(t, want), 1e-4)
			checked++
		case "after":
			fixture.CloseScaled(t, name, values(t, state[param]), values(t, want), 1e-5)
			checked++
		}
	}
	if checked != 48+12 { // 18 layers + 6 batch norms with weight and bias; 6 x 2 statistics
		t.Fatalf("checked %d gradients and statistics, want %d", checked, 48+12)
	}
}

func TestConfigAndDecodeErrors(t *testing.T) {
	if _, err := New(Config{Latent: 0}); err == nil {
		t.Fatal("latent 0 accepted")
	}
	m, err := New(Config{Latent: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Decode([]float64{1, 2, 3}); err == nil {
		t.Fatal("3 values decoded as latent points of 2")
	}
	if _, err := m.Decode(nil); err == nil {
		t.Fatal("no latent points decoded")
	}
	sc := torch.NewScope()
	defer sc.Close()
	if _, err := m.Collate(sc, []models.Dense{make([]float32, 10)}); err == nil {
		t.Fatal("a 10-pixel example collated")
	}
}

// TestDenseWidth builds a narrow network, checks its dense layers' shapes and
// size, and round-trips it through a checkpoint; a header written before the
// width could be set (no dense_width) reads as the authors' 800.
func TestDenseWidth(t *testing.T) {
	if _, err := New(Config{Latent: 2, DenseWidth: -1}); err == nil {
		t.Fatal("dense width -1 accepted")
	}
	m, err := New(Config{Latent: 3, DenseWidth: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	shapes := map[string][]int64{}
	params := int64(0)
	for _, n := range m.NamedParameters() {
		shapes[n.Name] = n.Tensor.Shape()
		params += n.Tensor.Numel()
	}
	for name, want := range map[string][]int64{"encoder.18.weight": {16, 3200}, "encoder.20.weight": {6, 16},
		"decoder.0.weight": {16, 3}, "decoder.2.weight": {3200, 16}} {
		if !slices.Equal(shapes[name], want) {
			t.Fatalf("%s: shape %v, want %v", name, shapes[name], want)
		}
	}
	// The dense layers: 3200*16+16 + 16*6+6 (encoder), 3*16+16 + 16*3200+3200
	// (decoder); the rest is the authors' convolutions and batch norms, the
	// same at every width (5,755,209 parameters in all at the authors' 800).
	dense := int64(3200*16 + 16 + 16*6 + 6 + 3*16 + 16 + 16*3200 + 3200)
	if convs := int64(291360 + 291009); params != dense+convs { // encoder, decoder
		t.Fatalf("%d parameters, want %d dense + %d others", params, dense, convs)
	}
	path := filepath.Join(t.TempDir(), "narrow.pt")
	if err := models.SaveNetwork(path, m); err != nil {
		t.Fatal(err)
	}
	back, _, err := Load(path, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got := back.Config(); got != (Config{Latent: 3, DenseWidth: 16}) {
		t.Fatalf("loaded config %+v", got)
	}
	var old Config
	if err := json.Unmarshal([]byte(`{"latent_dim": 20}`), &old); err != nil || old.Width() != AuthorsDenseWidth {
		t.Fatalf("old header: %+v (%v), width %d", old, err, old.Width())
	}
	if DefaultConfig().Width() != 800 {
		t.Fatalf("default width %d, want the authors' 800", DefaultConfig().Width())
	}
}
