package acq_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// TestWithGPModel runs the acquisition functions on fitted SGPR models (with
// and without warping): input gradients against central differences, batch
// against single evaluation, and a maximisation inside the unit box.
func TestWithGPModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 120, 3
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x.Set(i, k, rng.Float64())
		}
		y[i] = math.Sin(4*x.At(i, 0)) - (x.At(i, 1)-0.3)*(x.At(i, 1)-0.3) + 0.05*rng.NormFloat64()
	}
	for _, warp := range []bool{false, true} {
		model, err := gp.Fit(x, y, gp.Options{Inducing: 20, Warp: warp, Seed: 1, MaxIter: 50})
		if err != nil {
			t.Fatal(err)
		}
		best := acq.QuantileBest(y, 0.9)
		for _, f := range []acq.Acquisition{acq.NewEI(model, best), acq.NewLogEI(model, best), acq.NewUCB(model, 4)} {
			pt := []float64{0.37, 0.52, 0.81}
			g := make([]float64, d)
			f.Eval(pt, g)
			for k := 0; k < d; k++ {
				// The latent variance is a difference of O(s) terms, so
				// differences need a step well above its rounding error.
				const h = 3e-5
				p, q := slices.Clone(pt), slices.Clone(pt)
				p[k] += h
				q[k] -= h
				fd := (f.Eval(p, nil) - f.Eval(q, nil)) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("warp=%v %v dim %d: gradient %g, fd %g", warp, f.Kind, k, g[k], fd)
				}
			}
			lower, upper := []float64{0, 0, 0}, []float64{1, 1, 1}
			res, err := acq.Maximize(f, lower, upper, acq.Options{RawSamples: 256, Restarts: 5, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := acq.Maximize(f, lower, upper, acq.Options{RawSamples: 256, Restarts: 1, Seed: 2, MaxIter: 1})
			for k, v := range res.X {
				if v < 0 || v > 1 {
					t.Errorf("maximiser coordinate %d = %v outside the box", k, v)
				}
			}
			if res.Value < raw.Value-1e-12 || math.Abs(f.Eval(res.X, nil)-res.Value) > 1e-12*math.Max(1, math.Abs(res.Value)) {
				t.Errorf("warp=%v %v: value %v at %v", warp, f.Kind, res.Value, res.X)
			}
		}
	}
}
