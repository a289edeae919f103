package gp

import (
	"math"
	"math/rand/v2"
	"slices"
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

// TestStandardizerExtremeTargets: any finite targets standardise to finite
// values; one huge outlier is clamped to the fence and does not flatten
// the rest, and targets that need no clamp are standardised exactly as by
// the plain formulas.
func TestStandardizerExtremeTargets(t *testing.T) {
	ordinary := []float64{0.3, 1.2, -0.7, 2.5, 0.9, 1.1, -1.6, 0.4}
	cases := []struct {
		name    string
		y       []float64
		clamped int
	}{
		{"one -1e308", append([]float64{-1e308}, ordinary...), 1},
		{"one +1e308", append([]float64{1e308}, ordinary...), 1},
		{"±MaxFloat64", append([]float64{math.MaxFloat64, -math.MaxFloat64}, ordinary...), 2},
		{"all huge", []float64{1e308, -1e308, 5e307, -5e307, 1.7e308}, 0},
		{"all equal huge", []float64{-1e308, -1e308, -1e308}, 0},
		{"all equal", []float64{7, 7, 7, 7}, 0},
		{"single", []float64{-1e308}, 0},
		{"tiny", []float64{1e-320, 3e-320, -2e-320, 5e-324}, 0},
		{"ties and an outlier", []float64{1, 1, 1, 1, 1, 2, -1e308}, 0},
	}
	for _, c := range cases {
		st, err := NewStandardizer(c.y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		z := st.Transform(c.y)
		for i, v := range z {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: target %g standardises to %v", c.name, c.y[i], v)
			}
		}
		if st.Clamped != c.clamped {
			t.Errorf("%s: %d targets clamped, want %d", c.name, st.Clamped, c.clamped)
		}
		// A later target of any size (the kriging believer's) stays finite.
		for _, v := range []float64{-math.MaxFloat64, math.MaxFloat64, 0} {
			if z := st.Transform([]float64{v}); math.IsNaN(z[0]) || math.IsInf(z[0], 0) {
				t.Errorf("%s: later target %g standardises to %v", c.name, v, z[0])
			}
		}
	}

	// The outlier does not flatten the others: at the fence it adds
	// (FenceSDs σ_r)²/N to the variance of N targets, 0.83 σ² for 3000
	// normal ones (σ_r ≈ σ), so their standardised spread shrinks by about
	// 1/√1.83 = 0.74 (without the fence, by about 1e-306).
	rng := rand.New(rand.NewPCG(1, 2))
	normal := make([]float64, 3000)
	for i := range normal {
		normal[i] = rng.NormFloat64()
	}
	plain, _ := NewStandardizer(normal)
	st, _ := NewStandardizer(append([]float64{-1e308}, normal...))
	a, b := plain.Transform(normal), st.Transform(normal)
	ratio := (slices.Max(b) - slices.Min(b)) / (slices.Max(a) - slices.Min(a))
	if ratio < 0.7 || ratio > 0.78 {
		t.Errorf("the outlier shrinks the others' spread by %g, want about 0.74", ratio)
	}
	if got := st.Transform([]float64{-1e308})[0]; !(got < slices.Min(b)) {
		t.Errorf("the clamped outlier standardises to %g, not below the others (min %g)", got, slices.Min(b))
	}

	// Without a clamp the results are the plain formulas', bit for bit.
	for _, y := range [][]float64{ordinary, normal, {3e100, -2e100, 1e99}} {
		st, _ := NewStandardizer(y)
		m, v := meanVar(y)
		sd := math.Sqrt(v)
		if st.Clamped != 0 || st.Mean != m || st.Std != sd {
			t.Errorf("%v: mean %v std %v clamped %d, plain formulas %v %v", y, st.Mean, st.Std, st.Clamped, m, sd)
		}
		for i, z := range st.Transform(y) {
			if want := (y[i] - m) / sd; z != want {
				t.Errorf("%v: target %d standardises to %v, plain %v", y, i, z, want)
			}
		}
		if mu, va := st.Inverse(0.5, 2); mu != m+sd*0.5 || va != sd*sd*2 {
			t.Errorf("%v: inverse %v %v, plain %v %v", y, mu, va, m+sd*0.5, sd*sd*2)
		}
	}
}
