package bo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// believerFit is a fitted sparse or exact GP on random data, as a round
// starts from.
func believerFit(t *testing.T, inducing int, approx gp.Approximation) fitResult {
	t.Helper()
	const n, d = 60, 3
	rng := rand.New(rand.NewPCG(9, 9))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range y {
		for k := 0; k < d; k++ {
			x.Set(i, k, rng.Float64())
			y[i] += math.Sin(3 * x.At(i, k))
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	m, err := gp.Fit(x, y, gp.Options{Inducing: inducing, Seed: 1, MaxIter: 30, Approximation: approx})
	if err != nil {
		t.Fatal(err)
	}
	return fitResult{model: m, xn: x, yStd: y}
}

// TestBelieverConditionsAsItRebuilds: the believer conditioning by
// gp.Model.Condition (the schedules other than every) holds the posterior
// of the one rebuilding with gp.New (every, as before): after fantasies,
// real observations and fantasies made real, both predict the same to
// 1e-8 (the tolerance of gp's conditioning tests: both are exact, they
// differ by rounding of about 1e-12) and carry the same incumbent's data.
// Proposals are not compared: EI's maximisation turns differences in the
// last bits into other local optima after a few steps.
func TestBelieverConditionsAsItRebuilds(t *testing.T) {
	for _, c := range []struct {
		inducing int
		approx   gp.Approximation
	}{{10, gp.Titsias}, {10, gp.FITC}, {0, ""}} {
		t.Run(fmt.Sprintf("inducing %d %s", c.inducing, c.approx), func(t *testing.T) {
			f := believerFit(t, c.inducing, c.approx)
			rebuild, cond := newBeliever(f, true, GPInducingFixed), newBeliever(f, false, GPInducingFixed)
			steps := []func(b *believer) error{
				func(b *believer) error {
					return b.add([]float64{0.2, 0.4, 0.6}, b.mean([]float64{0.2, 0.4, 0.6}), false)
				},
				func(b *believer) error { return b.add([]float64{0.8, 0.1, 0.3}, -1.5, true) },
				func(b *believer) error {
					return b.update(nil, [][]float64{{0.5, 0.5, 0.5}, {0.9, 0.9, 0.1}}, []float64{0.3, b.mean([]float64{0.9, 0.9, 0.1})},
						[]bool{true, false})
				},
				func(b *believer) error { // the first fantasy, then the last, become real
					return b.update(map[int]float64{60: 0.7, 63: -0.2}, [][]float64{{0.1, 0.9, 0.5}}, []float64{1.1}, []bool{true})
				},
			}
			for i, step := range steps {
				if err := step(rebuild); err != nil {
					t.Fatal(err)
				}
				if err := step(cond); err != nil {
					t.Fatal(err)
				}
				if rebuild.rows() != cond.rows() || rebuild.model.Points() != cond.model.Points() {
					t.Fatalf("step %d: %d/%d rows, %d/%d points", i, rebuild.rows(), cond.rows(), rebuild.model.Points(), cond.model.Points())
				}
				worst := 0.0
				for _, u := range [][]float64{{0.2, 0.4, 0.6}, {0.5, 0.5, 0.5}, {0.3, 0.7, 0.9}, {0.05, 0.95, 0.5}} {
					m1, v1 := rebuild.model.Predict(u)
					m2, v2 := cond.model.Predict(u)
					worst = math.Max(worst, math.Max(math.Abs(m1-m2), math.Abs(v1-v2)))
				}
				if worst > 1e-8 {
					t.Errorf("step %d: the conditioned believer predicts %.2e away from the rebuilt one", i, worst)
				}
				if rebuild.bestF(0.9) != cond.bestF(0.9) || len(rebuild.real) != len(cond.real) {
					t.Errorf("step %d: incumbents %v and %v from %d and %d real targets", i, rebuild.bestF(0.9), cond.bestF(0.9),
						len(rebuild.real), len(cond.real))
				}
			}
			if want := 60 + 5; cond.model.Points() != want {
				t.Errorf("%d points after the updates, want %d", cond.model.Points(), want)
			}
			for _, b := range []*believer{rebuild, cond} {
				if err := b.update(map[int]float64{59: 1}, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "row 59") {
					t.Errorf("rebuild %v: setting the target of a fit's point: %v, want an error naming row 59", b.rebuild, err)
				}
				if err := b.add([]float64{0.1, 0.2, 0.3}, math.NaN(), true); err == nil || !strings.Contains(err.Error(), "NaN") {
					t.Errorf("rebuild %v: a NaN target: %v, want an error naming it", b.rebuild, err)
				}
			}
		})
	}
}
