package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	fx "github.com/tlbo-native/tlbo-native/internal/fixture"
)

// fixture reads arrays from a committed .npz file of testdata/gp.
type fixture struct {
	t *testing.T
	s fx.Set
}

func openFixture(t *testing.T, name string) fixture {
	t.Helper()
	return fixture{t, fx.Load(t, "gp", name)}
}

func (f fixture) vec(name string) []float64 {
	f.t.Helper()
	return f.s.Float64s(f.t, name)
}

func (f fixture) scalar(name string) float64 {
	f.t.Helper()
	return f.s.Scalar(f.t, name)
}

func (f fixture) mat(name string) *mat.Dense {
	f.t.Helper()
	return f.s.Dense(f.t, name)
}

// assertClose fails if got and want differ by more than atol + rtol|want|.
func assertClose(t *testing.T, what string, got, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > atol+rtol*math.Abs(want[i]) {
			t.Errorf("%s[%d] = %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}

// TestExactMatchesSklearn compares the exact GP's log marginal likelihood
// and latent posterior with scikit-learn's GaussianProcessRegressor at the
// same fixed hyperparameters. Tolerance: 1e-9 relative (float64 rounding in
// two different Cholesky-based implementations).
func TestExactMatchesSklearn(t *testing.T) {
	f := openFixture(t, "exact_sklearn.npz")
	x, y, xt := f.mat("X"), f.vec("y"), f.mat("Xt")
	h := Hyper{Lengthscales: f.vec("ell"), Outputscale: f.scalar("s"), Mean: f.scalar("c"), Noise: f.scalar("noise")}
	for _, k := range []Kernel{RBF, Matern52} {
		t.Run(k.String(), func(t *testing.T) {
			m, err := New(x, y, Spec{Kernel: k, NoPriors: true}, h)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, "lml", []float64{m.LogLik()}, []float64{f.scalar("lml_" + k.String())}, 1e-10, 0)
			checkPredictions(t, m, xt, f.vec("mean_"+k.String()), f.vec("var_"+k.String()), 1e-9, 1e-10)
		})
	}
}

// TestSGPRMatchesNumpy compares the collapsed bound and SGPR predictions
// with the independent numpy implementation (GPflow's formulas) of
// make_fixtures.py, with and without warping. Tolerance: 1e-9 relative
// for the bound and means, 1e-8 absolute for variances (the SGPR variance is
// a difference of O(s) terms).
func TestSGPRMatchesNumpy(t *testing.T) {
	f := openFixture(t, "sgpr_numpy.npz")
	x, y, z, xt := f.mat("X"), f.vec("y"), f.mat("Z"), f.mat("Xt")
	for _, k := range []Kernel{RBF, Matern52} {
		for _, warp := range []bool{false, true} {
			suffix := k.String()
			if warp {
				suffix = "warp_" + suffix
			}
			t.Run(suffix, func(t *testing.T) {
				h := Hyper{Lengthscales: f.vec("ell"), Outputscale: f.scalar("s"), Mean: f.scalar("c"), Noise: f.scalar("noise")}
				if warp {
					h.WarpA, h.WarpB = f.vec("warp_a"), f.vec("warp_b")
				}
				m, err := New(x, y, Spec{Kernel: k, Inducing: z, Warp: warp, NoPriors: true}, h)
				if err != nil {
					t.Fatal(err)
				}
				assertClose(t, "bound", []float64{m.LogLik()}, []float64{f.scalar("bound_" + suffix)}, 1e-9, 0)
				checkPredictions(t, m, xt, f.vec("mean_"+suffix), f.vec("var_"+suffix), 1e-9, 1e-8)
			})
		}
	}
}

// checkPredictions compares Predict and PredictBatch with reference values.
func checkPredictions(t *testing.T, m *Model, xt *mat.Dense, wantMean, wantVar []float64, rtol, vatol float64) {
	t.Helper()
	q, _ := xt.Dims()
	mean, variance := make([]float64, q), make([]float64, q)
	m.PredictBatch(xt, mean, variance)
	assertClose(t, "batch mean", mean, wantMean, rtol, 1e-12)
	assertClose(t, "batch variance", variance, wantVar, rtol, vatol)
	for i := 0; i < q; i++ {
		mean[i], variance[i] = m.Predict(xt.RawRowView(i))
	}
	assertClose(t, "mean", mean, wantMean, rtol, 1e-12)
	assertClose(t, "variance", variance, wantVar, rtol, vatol)
}
