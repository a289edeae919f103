package gp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNormalizerMatchesNumpy compares the bounds with numpy's quantiles
// (testdata/gp/normalize.npz; the best point lies outside the quantile range
// in two dimensions). Tolerance 1e-12 relative.
func TestNormalizerMatchesNumpy(t *testing.T) {
	f := openFixture(t, "normalize.npz")
	x := f.mat("X")
	nz, err := NewNormalizer(x, f.vec("best"))
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "lower", nz.Lower, f.vec("lower"), 1e-12, 1e-12)
	assertClose(t, "upper", nz.Upper, f.vec("upper"), 1e-12, 1e-12)
	u := nz.Transform(x)
	back := make([]float64, 6)
	nz.InverseVec(back, u.RawRowView(5))
	assertClose(t, "round trip", back, x.RawRowView(5), 1e-12, 1e-12)

	y := f.vec("y")
	st, err := NewStandardizer(y)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "standardiser", []float64{st.Mean, st.Std}, []float64{f.scalar("ymean"), f.scalar("ystd")}, 1e-12, 1e-12)
	m, v := st.Inverse(st.Transform(y)[3], 2)
	assertClose(t, "inverse", []float64{m, v}, []float64{y[3], 2 * st.Std * st.Std}, 1e-12, 1e-12)

	// A constant column gets a unit-width box around its value.
	c := mat.NewDense(3, 1, []float64{2, 2, 2})
	nz, err = NewNormalizer(c, nil)
	if err != nil || nz.Lower[0] != 1.5 || nz.Upper[0] != 2.5 {
		t.Errorf("constant column: %+v, %v", nz, err)
	}
	if _, err := NewNormalizer(x, []float64{1}); err == nil || !strings.Contains(err.Error(), "best point") {
		t.Errorf("short best point: %v", err)
	}
	if _, err := NewStandardizer([]float64{1, math.NaN()}); err == nil {
		t.Error("NaN target accepted")
	}
}

func TestKMeans(t *testing.T) {
	// Three tight clusters; k = 3 must find their centres.
	centres := [][]float64{{0.1, 0.1}, {0.9, 0.2}, {0.5, 0.9}}
	x := mat.NewDense(300, 2, nil)
	for i := 0; i < 300; i++ {
		c := centres[i%3]
		x.SetRow(i, []float64{c[0] + 0.01*math.Sin(float64(i)), c[1] + 0.01*math.Cos(float64(i))})
	}
	z := KMeans(x, 3, 20, 4)
	for _, c := range centres {
		best := math.Inf(1)
		for j := 0; j < 3; j++ {
			best = math.Min(best, math.Hypot(z.At(j, 0)-c[0], z.At(j, 1)-c[1]))
		}
		if best > 0.005 {
			t.Errorf("no centre near %v: %v", c, mat.Formatted(z))
		}
	}
	if !mat.Equal(z, KMeans(x, 3, 20, 4)) {
		t.Error("KMeans is not deterministic for a seed")
	}
	if r, _ := KMeans(x.Slice(0, 2, 0, 2).(*mat.Dense), 5, 3, 1).Dims(); r != 2 {
		t.Errorf("k > N gives %d centres, want N = 2", r)
	}
}

func TestRegressorScore(t *testing.T) {
	x, y := randomProblem(200, 2, 21)
	// Shift and scale both, so the preprocessing matters.
	x.Scale(10, x)
	for i := range y {
		y[i] = 100 + 5*y[i]
	}
	xt, yt := randomProblem(50, 2, 22)
	xt.Scale(10, xt)
	for i := range yt {
		yt[i] = 100 + 5*yt[i]
	}
	reg, err := FitRegressor(x, y, Options{Inducing: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ll, rmse, err := reg.Score(xt, yt)
	if err != nil {
		t.Fatal(err)
	}
	// Noise sd is 0.5 on this scale: the log-likelihood of a well-fitted
	// model is about -log(0.5 √(2πe)) = -0.73.
	t.Logf("test log-likelihood %.3f, rmse %.3f", ll, rmse)
	if rmse > 0.8 || ll < -1.3 {
		t.Errorf("test log-likelihood %.3f, rmse %.3f", ll, rmse)
	}
	mu, v := reg.Predict(xt.RawRowView(0))
	if math.Abs(mu-yt[0]) > 2.5 || v <= 0 {
		t.Errorf("Predict = (%v, %v), target %v", mu, v, yt[0])
	}
	if _, _, err := reg.Score(mat.NewDense(3, 3, nil), []float64{1, 2, 3}); err == nil {
		t.Error("Score accepted inputs of the wrong dimension")
	}
}
