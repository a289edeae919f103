package torch

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// composedAdamStep is AdamStep_ as ATen's in-place operators.
func composedAdamStep(p, g, m, v *Tensor, lr, b1, b2, eps, bc1, bc2 float64) error {
	denom := v.ZerosLike()
	defer denom.Close()
	errs := []error{m.MulScalar_(b1), m.Add_(g, 1-b1), v.MulScalar_(b2), v.Addcmul_(g, g, 1-b2)}
	sq := v.Sqrt()
	defer sq.Close()
	errs = append(errs, denom.Copy_(sq), denom.MulScalar_(1/math.Sqrt(bc2)), denom.AddScalar_(eps), p.Addcdiv_(m, denom, -lr/bc1))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestAdamStepMatchesComposed runs three Adam steps with the fused
// operator and with ATen's operators from the same state and compares the
// parameter and both moments: contiguous float64 (the one-pass loop) to
// 1e-14 relative, float32 to 1e-6 (the loop and ATen's vector kernels may
// round a fused multiply-add differently), and a transposed float32
// parameter (ATen's operators inside the fused one) exactly.
func TestAdamStepMatchesComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		name      string
		dtype     DType
		transpose bool
		tol       float64
	}{{"float64", Float64, false, 1e-14}, {"float32", Float32, false, 1e-6}, {"transposed", Float32, true, 0}} {
		sc := NewScope()
		init := func() []float64 {
			v := make([]float64, 6*7)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			return v
		}
		p0, m0, v0 := init(), init(), init()
		for i := range v0 {
			v0[i] *= v0[i]
		}
		state := func() [3]*Tensor {
			var s [3]*Tensor
			for i, x := range [][]float64{p0, m0, v0} {
				s[i] = sc.Own(sc.Own(FromFloat64(x, 6, 7)).ToDType(c.dtype))
				if c.transpose {
					s[i] = sc.Own(sc.Own(s[i].Transpose(0, 1)).Contiguous()).Transpose(0, 1)
				}
			}
			return s
		}
		fused, composed := state(), state()
		for step := 1; step <= 3; step++ {
			g := sc.Own(sc.Own(FromFloat64(init(), 6, 7)).ToDType(c.dtype))
			bc1, bc2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
			if err := AdamStep_(fused[0], g, fused[1], fused[2], 0.05, 0.9, 0.999, 1e-8, bc1, bc2); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if err := composedAdamStep(composed[0], g, composed[1], composed[2], 0.05, 0.9, 0.999, 1e-8, bc1, bc2); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		for i, name := range []string{"param", "exp_avg", "exp_avg_sq"} {
			got, err := fused[i].Float64s()
			if err != nil {
				t.Fatal(err)
			}
			want, err := composed[i].Float64s()
			if err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if math.Abs(got[j]-want[j]) > c.tol*math.Abs(want[j]) {
					t.Errorf("%s: %s[%d] = %.17g, composed %.17g", c.name, name, j, got[j], want[j])
				}
			}
		}
		sc.Close()
	}
}

// TestAdamStepRefusesBadInput: mismatched shapes and a zero bias correction
// are refused with the operator's name.
func TestAdamStepRefusesBadInput(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	p, other := sc.Own(Zeros([]int64{2, 3}, Float32, CPU)), sc.Own(Zeros([]int64{3, 2}, Float32, CPU))
	for name, err := range map[string]error{
		"shape":           AdamStep_(p, other, p.ZerosLike(), p.ZerosLike(), 1e-3, 0.9, 0.999, 1e-8, 0.1, 0.001),
		"bias correction": AdamStep_(p, p.ZerosLike(), p.ZerosLike(), p.ZerosLike(), 1e-3, 0.9, 0.999, 1e-8, 0, 0.001),
	} {
		if err == nil || !strings.Contains(err.Error(), "adam_step_") {
			t.Errorf("%s: error %v, want one naming adam_step_", name, err)
		}
	}
}
