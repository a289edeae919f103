package jtvae

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

const fixtureDir = "../../testdata/jtvae/"

func TestMain(m *testing.M) {
	if err := torch.SetNumThreads(1); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// parityModel is the fixture's network (the authors' weights, small hidden
// size) with the given switches and tree depth, on the CPU.
func parityModel(t testing.TB, f fixture, compat bool, depthT int) *Model {
	return parityModelOn(t, f, compat, depthT, torch.CPU)
}

// parityModelOn is parityModel on dev.
func parityModelOn(t testing.TB, f fixture, compat bool, depthT int, dev torch.Device) *Model {
	t.Helper()
	c := f.ints(t, "config") // hidden, latent, depthT, depthG, vocab size
	cfg := Config{VocabSize: int(c[4]), Hidden: int(c[0]), Latent: int(c[1]), LatentTree: int(c[1]) / 2,
		DepthT: depthT, DepthG: int(c[3]), EncoderGRUTanh: !compat, StopInputReLU: !compat, BilinearAssembly: !compat}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	sd, err := torch.Load(fixtureDir + "parity_state.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	if err := m.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	if err := m.To(dev); err != nil {
		t.Fatal(err)
	}
	return m
}

// cudaDevice returns the first CUDA device, or skips the test without one.
func cudaDevice(t *testing.T) torch.Device {
	if !torch.CUDAAvailable() {
		t.Skip("no CUDA device seen")
	}
	return torch.CUDA(0)
}

func collateFixture(t testing.TB, m *Model, sc *torch.Scope, ex []Example) *Batch {
	t.Helper()
	b, err := m.Collate(sc, ex)
	if err != nil {
		t.Fatal(err)
	}
	return b.(*Batch)
}

// TestEncoderParity: tree and graph vectors, means and log-variances of the
// authors' encoder (float64 reference, float32 here) to 1e-4.
func TestEncoderParity(t *testing.T) { encoderParity(t, torch.CPU) }

// TestEncoderParityCUDA is TestEncoderParity on the GPU.
func TestEncoderParityCUDA(t *testing.T) { encoderParity(t, cudaDevice(t)) }

func encoderParity(t *testing.T, dev torch.Device) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	for _, depth := range []int{20, 3} {
		m := parityModelOn(t, f, true, depth, dev)
		sc := torch.NewScope()
		defer sc.Close()
		b := collateFixture(t, m, sc, ex)
		path := 0
		for _, e := range ex {
			path = max(path, longestPath(e.Tree))
		}
		if got := b.tree.levelCount(); b.tree.iterations != 1 || got != min(path, depth) {
			t.Errorf("depth %d: %d levels (%d iterations), want %d (longest path %d)", depth, got, b.tree.iterations, min(path, depth), path)
		}
		torch.NoGrad(func() {
			tree, graph := m.Encode(b)
			mu, logStd := m.EncodeParams(b)
			checks := []struct {
				name string
				got  *torch.Tensor
			}{{"mean", mu}}
			if depth == 3 {
				checks[0].name = "mean_depth3"
			} else {
				checks = append(checks, struct {
					name string
					got  *torch.Tensor
				}{"tree_vecs", tree}, struct {
					name string
					got  *torch.Tensor
				}{"mol_vecs", graph}, struct {
					name string
					got  *torch.Tensor
				}{"logvar", logStd.MulScalar(2)})
			}
			for _, c := range checks {
				if err := closeTo(values(t, c.got), f.floats(t, c.name), 1e-4); err != nil {
					t.Errorf("depth %d: %s: %v", depth, c.name, err)
				}
			}
		})
	}
}

// lossStep evaluates the authors' training loss on the fixture's epsilon:
// word + topo + assm + beta KL, KL from the log-std as models' ELBO does.
func lossStep(t testing.TB, m *Model, b *Batch, eps *torch.Tensor, beta float64) (Losses, *torch.Tensor, *torch.Tensor) {
	t.Helper()
	mu, logStd := m.EncodeParams(b)
	z := mu.Add(logStd.Exp().Mul(eps))
	l := m.Losses(z, b)
	kl := logStd.MulScalar(2).Exp().Add(mu.Square()).AddScalar(-1).Sub(logStd.MulScalar(2)).Sum().MulScalar(0.5 / float64(b.Len()))
	total := l.Word.Add(l.Topo).Add(l.Assm).Add(kl.MulScalar(beta))
	return l, kl, total
}

// TestLossParity: word, topology, assembly and KL terms with both settings of
// the compatibility switches to 1e-4 relative; every gradient of the
// authors' setting to 1e-3 of the tensor's largest gradient.
func TestLossParity(t *testing.T) { lossParity(t, torch.CPU) }

// TestLossParityCUDA is TestLossParity on the GPU (the same tolerances).
func TestLossParityCUDA(t *testing.T) { lossParity(t, cudaDevice(t)) }

func lossParity(t *testing.T, dev torch.Device) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	beta := f.scalar(t, "beta")
	for _, compat := range []bool{true, false} {
		tag := map[bool]string{true: "compat", false: "orig"}[compat]
		m := parityModelOn(t, f, compat, 20, dev)
		sc := torch.NewScope()
		defer sc.Close()
		b := collateFixture(t, m, sc, ex)
		eps := sc.Own(sc.Own(torch.FromFloat32(f.float32s(t, "eps"), int64(len(ex)), int64(m.LatentDim()))).To(dev))
		l, kl, total := lossStep(t, m, b, eps, beta)
		for _, c := range []struct {
			name string
			got  *torch.Tensor
		}{{"word", l.Word}, {"topo", l.Topo}, {"assm", l.Assm}, {"kl", kl}, {"total", total},
			{"word_acc", l.WordAcc}, {"topo_acc", l.TopoAcc}, {"assm_acc", l.AssmAcc}} {
			t.Logf("%s %s: %.10g (authors %.10g)", tag, c.name, values(t, c.got)[0], f.scalar(t, tag+"_"+c.name))
			if err := closeTo(values(t, c.got), []float64{f.scalar(t, tag+"_"+c.name)}, 1e-4); err != nil {
				t.Errorf("%s %s: %v", tag, c.name, err)
			}
		}
		if !compat {
			continue
		}
		if err := total.Backward(); err != nil {
			t.Fatal(err)
		}
		grads := readFixture(t, fixtureDir+"parity_grads.npz")
		seen := 0
		for _, p := range m.NamedParameters() {
			want, ok := grads[p.Name]
			if !ok {
				continue
			}
			seen++
			g, err := p.Tensor.Grad()
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			w, _ := want.Float64s()
			scale := 0.0
			for _, v := range w {
				scale = math.Max(scale, math.Abs(v))
			}
			got := values(t, g)
			for i := range got {
				if d := math.Abs(got[i] - w[i]); d > 1e-3*scale+1e-7 {
					t.Errorf("grad %s[%d]: %.6g, want %.6g (largest %.3g)", p.Name, i, got[i], w[i], scale)
					break
				}
			}
		}
		t.Logf("compared %d gradients", seen)
		if seen != len(grads) || seen < 40 {
			t.Errorf("compared %d gradients of %d in the fixture", seen, len(grads))
		}
	}
}

// TestLayout: names and shapes of the full-size network are the authors'
// (45 tensors, 5,676,743 parameters with 780 clusters).
func TestLayout(t *testing.T) {
	f := readFixture(t, fixtureDir+"layout.npz")
	names, _ := f["names"].Data.([]string)
	shapes := f.ints(t, "shapes")
	vocab := make([]string, 780)
	m, err := New(DefaultConfig(vocab))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sd := m.StateDict()
	if len(sd) != 45 || len(names) != 45 {
		t.Fatalf("%d tensors here, %d in the authors' layout, want 45", len(sd), len(names))
	}
	total := int64(0)
	for i, n := range sd {
		s := n.Tensor.Shape()
		want := []int64{shapes[2*i], shapes[2*i+1]}
		if len(s) == 1 {
			want = want[:1]
		}
		if n.Name != strings.TrimSpace(names[i]) || !equalShape(s, want) {
			t.Errorf("tensor %d: %s %v, want %s %v", i, n.Name, s, names[i], want)
		}
		total += n.Tensor.Numel()
	}
	if total != 5676743 {
		t.Errorf("%d parameters, want 5676743", total)
	}
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
