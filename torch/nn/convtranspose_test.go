package nn_test

import (
	"math"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// TestConvTranspose2dAsConv compares ConvTranspose2d's forward, which on the
// CPU computes stride-1 layers as convolutions, with ATen's transposed
// convolution on the same weights: outputs and the gradients of input, weight
// and bias of sum(y^2) to 1e-5 relative to the largest entry, over strides 1
// to 3 (output padding stride - 1; those above 1 left to ATen), paddings 0 to
// 2, kernels 3 and 4, and one output channel (left to ATen).
func TestConvTranspose2dAsConv(t *testing.T) {
	if err := torch.ManualSeed(11); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, out, k, s, p int64 }{
		{3, 5, 3, 1, 1}, {3, 5, 3, 2, 1}, {4, 2, 3, 3, 0}, {2, 3, 4, 2, 2}, {3, 4, 3, 1, 0}, {4, 1, 3, 1, 1},
	} {
		layer := nn.NewConvTranspose2d(c.in, c.out, c.k, c.s, c.p, c.s-1)
		sc := torch.NewScope()
		x0 := sc.Own(torch.Randn([]int64{2, c.in, 5, 4}, torch.Float32, torch.CPU))
		grads := func(f func(x *torch.Tensor) *torch.Tensor) [][]float64 {
			x := sc.Own(x0.Clone()).SetRequiresGrad(true)
			y := sc.Own(f(x))
			if err := sc.Own(y.Square().Sum()).Backward(); err != nil {
				t.Fatal(err)
			}
			var out [][]float64
			for _, v := range []*torch.Tensor{y, x, layer.Weight, layer.Bias} {
				if v != y {
					g, err := v.Grad()
					if err != nil {
						t.Fatal(err)
					}
					v = sc.Own(g.Clone())
				}
				vals, err := v.Float64s()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, vals)
			}
			for _, p := range []*torch.Tensor{layer.Weight, layer.Bias} {
				if g, _ := p.Grad(); g != nil {
					if err := g.Zero_(); err != nil {
						t.Fatal(err)
					}
				}
			}
			return out
		}
		got := grads(layer.Forward)
		want := grads(func(x *torch.Tensor) *torch.Tensor {
			s, p := c.s, c.p
			return torch.ConvTranspose2d(x, layer.Weight, layer.Bias, [2]int64{s, s}, [2]int64{p, p},
				[2]int64{s - 1, s - 1}, [2]int64{1, 1}, 1)
		})
		for i, name := range []string{"output", "d/dx", "d/dweight", "d/dbias"} {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("%+v: %s has %d entries, want %d", c, name, len(got[i]), len(want[i]))
			}
			scale := 0.0
			for _, v := range want[i] {
				scale = math.Max(scale, math.Abs(v))
			}
			for j := range got[i] {
				if math.Abs(got[i][j]-want[i][j]) > 1e-5*scale {
					t.Errorf("%+v: %s[%d] = %g, ATen's transposed convolution %g", c, name, j, got[i][j], want[i][j])
					break
				}
			}
		}
		sc.Close()
		layer.Close()
	}
}
