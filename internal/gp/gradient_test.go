package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomProblem returns n points in [0,1]^d with a smooth noisy target.
func randomProblem(n, d int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for k := 0; k < d; k++ {
			v := rng.Float64()
			x.Set(i, k, v)
			s += math.Sin(3*v+float64(k)) * (1 + 0.3*float64(k))
		}
		y[i] = s + 0.1*rng.NormFloat64()
	}
	return x, y
}

func testHyper(d int, warp bool) Hyper {
	h := Hyper{Lengthscales: make([]float64, d), Outputscale: 1.3, Mean: 0.2, Noise: 0.05}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = 0.4 + 0.15*float64(k)
	}
	if warp {
		h.WarpA, h.WarpB = make([]float64, d), make([]float64, d)
		for k := 0; k < d; k++ {
			h.WarpA[k] = 0.7 + 0.2*float64(k)
			h.WarpB[k] = 1.4 - 0.1*float64(k)
		}
	}
	return h
}

// checkGradient compares Eval's gradient with central finite differences.
func checkGradient(t *testing.T, o *Objective, theta []float64, tol float64) {
	t.Helper()
	grad := make([]float64, len(theta))
	if _, err := o.Eval(theta, grad); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := range theta {
		h := 1e-5 * math.Max(1, math.Abs(theta[i]))
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		tp[i] += h
		tm[i] -= h
		fp, err1 := o.Eval(tp, nil)
		fm, err2 := o.Eval(tm, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		fd := (fp - fm) / (2 * h)
		rel := math.Abs(fd-grad[i]) / math.Max(1, math.Abs(fd))
		worst = math.Max(worst, rel)
		if rel > tol {
			t.Errorf("parameter %d: analytic %.10g, finite difference %.10g", i, grad[i], fd)
		}
	}
	t.Logf("worst relative gradient error %.2e over %d parameters", worst, len(theta))
}

func TestObjectiveGradient(t *testing.T) {
	const n, d, m = 40, 3, 9
	x, y := randomProblem(n, d, 7)
	z := KMeans(x, m, 5, 3)
	// Perturb the inducing points so none coincides with a data point.
	for i := 0; i < m; i++ {
		for k := 0; k < d; k++ {
			z.Set(i, k, z.At(i, k)+0.01*float64(i-k))
		}
	}
	for _, kern := range []Kernel{RBF, Matern52} {
		for _, warp := range []bool{false, true} {
			for _, approx := range []Approximation{"exact", Titsias, FITC} {
				name := fmt.Sprintf("%v/warp=%v/%s", kern, warp, approx)
				t.Run(name, func(t *testing.T) {
					spec := Spec{Kernel: kern, Warp: warp}
					if approx != "exact" {
						spec.Inducing, spec.Approximation = z, approx
					}
					o, err := NewObjective(x, y, spec)
					if err != nil {
						t.Fatal(err)
					}
					theta, err := o.Pack(testHyper(d, warp), nil)
					if err != nil {
						t.Fatal(err)
					}
					checkGradient(t, o, theta, 1e-6)
				})
			}
		}
	}
}
