package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestFitRegressorRaw: the raw regressor fits the data as given (the same
// model as Fit on them, identity transforms), while FitRegressor fits
// normalised, standardised data; both predict on the original scales.
func TestFitRegressorRaw(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 60
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		a, b := 10*rng.Float64(), 10*rng.Float64()
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = 100 + 20*math.Sin(a/3) + b
	}
	opts := Options{Seed: 1}
	raw, err := FitRegressorRaw(x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Fit(x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Model.LogLik() != direct.LogLik() || raw.Targets.Mean != 0 || raw.Targets.Std != 1 {
		t.Errorf("raw: log-likelihood %v, targets %+v; want Fit's %v and identity targets", raw.Model.LogLik(), raw.Targets, direct.LogLik())
	}
	norm, err := FitRegressor(x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := raw.Predict([]float64{5, 5})
	m2, _ := norm.Predict([]float64{5, 5})
	want := 100 + 20*math.Sin(5.0/3) + 5
	if math.Abs(m2-want) > 2 || math.IsNaN(m1) {
		t.Errorf("predictions at (5, 5): raw %v, normalised %v; want finite and the normalised within 2 of %v", m1, m2, want)
	}
}
