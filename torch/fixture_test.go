package torch_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Tolerances for float32 losses computed by the same libtorch kernels.
const atol, rtol = 1e-6, 1e-5

func TestLossesMatchPyTorch(t *testing.T) {
	cases := map[string]func(a, b *torch.Tensor) *torch.Tensor{
		"mse":           func(a, b *torch.Tensor) *torch.Tensor { return torch.MSELoss(a, b, torch.ReduceMean) },
		"bce":           func(a, b *torch.Tensor) *torch.Tensor { return torch.BCELoss(a, b, nil, torch.ReduceMean) },
		"bce_logits":    func(a, b *torch.Tensor) *torch.Tensor { return torch.BCEWithLogitsLoss(a, b, nil, torch.ReduceMean) },
		"cross_entropy": func(a, b *torch.Tensor) *torch.Tensor { return torch.CrossEntropyLoss(a, b, torch.ReduceMean) },
	}
	for name, loss := range cases {
		t.Run(name, func(t *testing.T) {
			fx := torchfixture.Load(t, "torch", name+".npz")
			sc := torch.NewScope()
			defer sc.Close()
			a := sc.Own(fx.Get(t, "input.0").Clone().Detach()).SetRequiresGrad(true)
			b := sc.Own(fx.Get(t, "input.1").Clone().Detach())
			if _, ok := fx["grad.input.1"]; ok {
				b.SetRequiresGrad(true)
			}
			out := loss(a, b)
			torchfixture.Close(t, "loss", out, fx.Get(t, "output.0"), atol, rtol)
			if err := out.Backward(); err != nil {
				t.Fatal(err)
			}
			for k, x := range []*torch.Tensor{a, b} {
				want, ok := fx[[]string{"grad.input.0", "grad.input.1"}[k]]
				if !ok {
					continue
				}
				g, err := x.Grad()
				if err != nil || g == nil {
					t.Fatalf("no gradient for input %d: %v", k, err)
				}
				torchfixture.Close(t, "gradient", g, want, atol, rtol)
				g.Close()
			}
		})
	}
}

func TestLoadPythonStateDict(t *testing.T) {
	sd, err := torch.Load(torchfixture.Path("torch", "py_state_dict.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	want := torchfixture.Load(t, "torch", "py_state_dict_values.npz")
	var names []string
	for _, n := range sd {
		names = append(names, n.Name)
		torchfixture.Close(t, n.Name, n.Tensor, want.Get(t, n.Name), 0, 0)
	}
	if got := strings.Join(names, " "); got != "0.weight 0.bias 1.weight 1.bias 1.running_mean 1.running_var 1.num_batches_tracked" {
		t.Errorf("names not in file order: %s", got)
	}
	if sd[6].Tensor.DType() != torch.Int64 || len(sd[6].Tensor.Shape()) != 0 {
		t.Errorf("num_batches_tracked: %v", sd[6].Tensor)
	}
}

func TestLoadPythonMixedCheckpoint(t *testing.T) {
	sd, err := torch.Load(torchfixture.Path("torch", "py_mixed.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	got := map[string]*torch.Tensor{}
	var names []string
	for _, n := range sd {
		got[n.Name] = n.Tensor
		names = append(names, n.Name)
	}
	if strings.Join(names, " ") != "f64 transposed i64 flag nested.scalar" {
		t.Fatalf("names %v", names)
	}
	tr, _ := got["transposed"].Float32s()
	if want := []float32{0, 3, 1, 4, 2, 5}; !slices.Equal(tr, want) {
		t.Errorf("non-contiguous tensor read as %v, want %v", tr, want)
	}
	if v, _ := got["nested.scalar"].Item(); v != 2.5 {
		t.Errorf("nested scalar %v", v)
	}
	if b, _ := got["flag"].Bools(); len(b) != 2 || !b[0] || b[1] {
		t.Errorf("bools %v", b)
	}
	if got["f64"].DType() != torch.Float64 || got["i64"].DType() != torch.Int64 {
		t.Errorf("dtypes %v %v", got["f64"].DType(), got["i64"].DType())
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := []torch.Named{
		{Name: "encoder.0.weight", Tensor: torch.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{Name: "steps", Tensor: torch.FromInt64([]int64{42}, []int64{}...)},
		{Name: "mask", Tensor: torch.FromBool([]bool{true, false, true}, 3)},
		{Name: "f64", Tensor: torch.FromFloat64([]float64{0.1, 0.2}, 2, 1)},
	}
	defer torch.CloseNamed(in)
	for _, ext := range []string{".pt", ".npz"} {
		path := filepath.Join(dir, "ckpt"+ext)
		if err := torch.Save(path, in); err != nil {
			t.Fatal(err)
		}
		out, err := torch.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in) {
			t.Fatalf("%s: %d tensors back, want %d", ext, len(out), len(in))
		}
		for i := range in {
			if out[i].Name != in[i].Name || out[i].Tensor.DType() != in[i].Tensor.DType() {
				t.Errorf("%s: tensor %d is %s %v, want %s %v", ext, i, out[i].Name, out[i].Tensor, in[i].Name, in[i].Tensor)
				continue
			}
			torchfixture.Close(t, ext+" "+in[i].Name, out[i].Tensor, in[i].Tensor, 0, 0)
		}
		torch.CloseNamed(out)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %d entries", len(entries))
	}
}

func TestLoadBadFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pt")
	os.WriteFile(garbage, []byte("this is not a checkpoint"), 0o644)
	truncated := filepath.Join(dir, "truncated.pt")
	data, _ := os.ReadFile(torchfixture.Path("torch", "py_state_dict.pt"))
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	badNPZ := filepath.Join(dir, "bad.npz")
	os.WriteFile(badNPZ, []byte("PK nope"), 0o644)
	for _, p := range []string{filepath.Join(dir, "missing.pt"), garbage, truncated, badNPZ} {
		if _, err := torch.Load(p); err == nil {
			t.Errorf("%s: loaded without error", p)
		} else if !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("error does not name the file: %v", err)
		}
	}
	if err := torch.Save(filepath.Join(dir, "no", "such", "dir.pt"), nil); err == nil {
		t.Error("save into a missing directory succeeded")
	}
}
