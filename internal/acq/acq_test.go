package acq

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/fixture"
)

func readFixture(t *testing.T, file string, names ...string) map[string][]float64 {
	t.Helper()
	all := fixture.LoadFloat64s(t, "gp", file)
	out := map[string][]float64{}
	for _, n := range names {
		v, ok := all[n]
		if !ok {
			t.Fatalf("fixture %s has no array %q", file, n)
		}
		out[n] = v
	}
	return out
}

// TestEIAgainstReference compares EI and log-EI with 60-digit mpmath values
// (testdata/gp/ei_ref.npz), from z = 40 down to z = -1e4, where plain
// float64 EI underflows but log-EI must stay accurate. Tolerances: 1e-12
// relative for log-EI; 1e-11 relative for EI where it does not underflow.
func TestEIAgainstReference(t *testing.T) {
	f := readFixture(t, "ei_ref.npz", "mean", "var", "best", "z", "ei", "logei")
	for i := range f["z"] {
		m, v, b := f["mean"][i], f["var"][i], f["best"][i]
		lei, _, _ := LogEI(m, v, b)
		if want := f["logei"][i]; math.Abs(lei-want) > 1e-12*math.Abs(want)+1e-13 {
			t.Errorf("z=%g: LogEI = %.17g, want %.17g", f["z"][i], lei, want)
		}
		ei, _, _ := EI(m, v, b)
		if want := f["ei"][i]; math.Abs(ei-want) > 1e-11*want+1e-300 {
			t.Errorf("z=%g: EI = %.17g, want %.17g", f["z"][i], ei, want)
		}
	}
}

// TestAcquisitionDerivatives checks ∂/∂mean and ∂/∂variance of EI, log-EI
// and UCB by central differences, in the body and the tail.
func TestAcquisitionDerivatives(t *testing.T) {
	type fn func(m, v, p float64) (float64, float64, float64)
	fns := map[string]fn{"EI": EI, "LogEI": LogEI, "UCB": UCB}
	for name, f := range fns {
		for _, z := range []float64{-60, -25, -3, -1.2, -1, -0.8, 0, 0.7, 4} {
			const v, best = 0.49, 0.3
			m := best + z*0.7
			p := best
			if name == "UCB" {
				p = 2
			}
			_, dm, dv := f(m, v, p)
			h := 1e-6 * math.Max(1, math.Abs(m))
			fp, _, _ := f(m+h, v, p)
			fm, _, _ := f(m-h, v, p)
			fdm := (fp - fm) / (2 * h)
			hv := 1e-7
			fp, _, _ = f(m, v+hv, p)
			fm, _, _ = f(m, v-hv, p)
			fdv := (fp - fm) / (2 * hv)
			if math.Abs(fdm-dm) > 1e-6*math.Max(1, math.Abs(fdm)) || math.Abs(fdv-dv) > 1e-6*math.Max(1, math.Abs(fdv)) {
				t.Errorf("%s at z=%g: d/dmean %g (fd %g), d/dvar %g (fd %g)", name, z, dm, fdm, dv, fdv)
			}
		}
	}
}

// quadModel is a toy posterior: mean -|x - c|², variance 0.1 + |x|²/10.
type quadModel struct{ c []float64 }

func (q quadModel) Dim() int { return len(q.c) }

func (q quadModel) PredictGrad(x, dm, dv []float64) (float64, float64) {
	mean, v := 0.0, 0.1
	for i := range x {
		mean -= (x[i] - q.c[i]) * (x[i] - q.c[i])
		v += x[i] * x[i] / 10
		if dm != nil {
			dm[i] = -2 * (x[i] - q.c[i])
		}
		if dv != nil {
			dv[i] = x[i] / 5
		}
	}
	return mean, v
}

func (q quadModel) PredictBatch(x *mat.Dense, mean, variance []float64) {
	for i := range mean {
		mean[i], variance[i] = q.PredictGrad(x.RawRowView(i), nil, nil)
	}
}

func TestAcquisitionGradientAndBatch(t *testing.T) {
	m := quadModel{c: []float64{0.3, 0.8, 0.1}}
	x := mat.NewDense(4, 3, []float64{0.1, 0.2, 0.3, 0.9, 0.1, 0.5, 0.5, 0.5, 0.5, 0, 1, 0})
	for _, a := range []Acquisition{NewEI(m, -0.05), NewLogEI(m, 0.5), NewUCB(m, 2)} {
		batch := make([]float64, 4)
		a.EvalBatch(x, batch)
		for i := 0; i < 4; i++ {
			pt := x.RawRowView(i)
			g := make([]float64, 3)
			v := a.Eval(pt, g)
			if math.Abs(v-batch[i]) > 1e-14*math.Max(1, math.Abs(v)) || v != a.Eval(pt, nil) {
				t.Errorf("%v: Eval %g, EvalBatch %g", a.Kind, v, batch[i])
			}
			for k := range pt {
				const h = 1e-6
				p, q := slices.Clone(pt), slices.Clone(pt)
				p[k] += h
				q[k] -= h
				fd := (a.Eval(p, nil) - a.Eval(q, nil)) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("%v point %d dim %d: gradient %g, fd %g", a.Kind, i, k, g[k], fd)
				}
			}
		}
	}
}

// TestMaximizeKnownOptimum: a concave function whose unconstrained maximiser
// lies outside the box in two coordinates is maximised at its projection.
func TestMaximizeKnownOptimum(t *testing.T) {
	c := []float64{0.3, 1.7, -0.4, 0.55, 0.9}
	lower := []float64{0, 0, 0, 0, 0}
	upper := []float64{1, 1, 1, 1, 1}
	f := Func(func(x, g []float64) float64 {
		v := 0.0
		for i := range x {
			w := 1 + float64(i)
			v -= w * (x[i] - c[i]) * (x[i] - c[i])
			if g != nil {
				g[i] = -2 * w * (x[i] - c[i])
			}
		}
		return v
	})
	res, err := Maximize(f, lower, upper, Options{RawSamples: 256, Restarts: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.3, 1, 0, 0.55, 0.9}
	for i := range want {
		if math.Abs(res.X[i]-want[i]) > 1e-6 {
			t.Fatalf("maximiser %v, want %v", res.X, want)
		}
	}
	if res.Evaluations <= 256 {
		t.Errorf("Evaluations = %d, want the raw samples and the refinement", res.Evaluations)
	}
}

// braninFunc is the negated Branin function on [-5, 10] x [0, 15].
var braninFunc = Func(func(x, g []float64) float64 {
	const a, b, c, r, s, tt = 1, 5.1 / (4 * math.Pi * math.Pi), 5 / math.Pi, 6, 10, 1 / (8 * math.Pi)
	u := x[1] - b*x[0]*x[0] + c*x[0] - r
	if g != nil {
		g[0] = -(2*a*u*(-2*b*x[0]+c) - s*(1-tt)*math.Sin(x[0]))
		g[1] = -(2 * a * u)
	}
	return -(a*u*u + s*(1-tt)*math.Cos(x[0]) + s)
})

// TestMaximizeBranin finds a global maximiser of the negated Branin
// function (value -0.397887) and is deterministic for a seed.
func TestMaximizeBranin(t *testing.T) {
	branin := braninFunc
	lower, upper := []float64{-5, 0}, []float64{10, 15}
	res, err := Maximize(branin, lower, upper, Options{RawSamples: 512, Restarts: 8, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Value+0.397887357729738) > 1e-8 {
		t.Errorf("max %v at %v, want -0.3978873577", res.Value, res.X)
	}
	again, _ := Maximize(branin, lower, upper, Options{RawSamples: 512, Restarts: 8, Seed: 11})
	if !slices.Equal(res.X, again.X) || res.Evaluations != again.Evaluations {
		t.Errorf("not deterministic: %v vs %v", res, again)
	}
}

// TestMaximizeEnds: Result.Ends holds every restart's end (8 restarts and
// one extra start), each a stationary point of the negated Branin function
// in the box (projected gradient below 1e-4) with f's value beside it, X
// is the best of them, BestEnds orders them best first and drops the
// near-duplicates, and a
// maximisation started from them and one fresh restart ends at least as
// high.
func TestMaximizeEnds(t *testing.T) {
	lower, upper := []float64{-5, 0}, []float64{10, 15}
	opts := Options{RawSamples: 512, Restarts: 8, Seed: 11, Starts: [][]float64{{0, 14}}}
	res, err := Maximize(braninFunc, lower, upper, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ends) != 9 || len(res.EndValues) != 9 {
		t.Fatalf("%d ends and %d values, want 9", len(res.Ends), len(res.EndValues))
	}
	best := 0
	for i, x := range res.Ends {
		g := make([]float64, 2)
		if v := braninFunc.Eval(x, g); v != res.EndValues[i] {
			t.Errorf("end %d: value %v, f there %v", i, res.EndValues[i], v)
		}
		for k := range x {
			step := math.Min(math.Max(x[k]+g[k], lower[k]), upper[k]) - x[k]
			if math.Abs(step) > 1e-4 {
				t.Errorf("end %d at %v: projected gradient %v in coordinate %d", i, x, step, k)
			}
		}
		if res.EndValues[i] > res.EndValues[best] {
			best = i
		}
	}
	if !slices.Equal(res.X, res.Ends[best]) {
		t.Errorf("X = %v, the best end %v", res.X, res.Ends[best])
	}
	top := res.BestEnds(3, 0)
	if len(top) != 3 || !slices.Equal(top[0], res.X) {
		t.Fatalf("BestEnds(3, 0) = %v, want 3 ends, the first X = %v", top, res.X)
	}
	for i := 1; i < len(top); i++ {
		if braninFunc.Eval(top[i], nil) > braninFunc.Eval(top[i-1], nil) {
			t.Errorf("BestEnds(3, 0) not best first: %v", top)
		}
	}
	if n, m := len(res.BestEnds(100, -1)), len(res.BestEnds(-1, 0)); n != 9 || m != 0 {
		t.Errorf("BestEnds(100, -1) has %d ends, BestEnds(-1, 0) %d; want 9 and 0", n, m)
	}
	// Branin has 3 maximisers in the box, far apart: the ends within 1e-3
	// of one another are one.
	distinct := res.BestEnds(100, 1e-3)
	if len(distinct) < 1 || len(distinct) > 4 || !slices.Equal(distinct[0], res.X) {
		t.Errorf("BestEnds(100, 1e-3) = %v, want at most 4 distinct ends (3 maximisers, the extra start's end), X first", distinct)
	}
	for i := range distinct {
		for j := range i {
			if within(distinct[i], distinct[j], 1e-3) {
				t.Errorf("BestEnds(100, 1e-3): ends %d and %d within 1e-3: %v, %v", j, i, distinct[j], distinct[i])
			}
		}
	}
	warm, err := Maximize(braninFunc, lower, upper, Options{RawSamples: 512, Restarts: 1, Seed: 12, Starts: res.Ends})
	if err != nil {
		t.Fatal(err)
	}
	if warm.Value < res.Value {
		t.Errorf("warm-started maximum %v below the ends' best %v", warm.Value, res.Value)
	}
}

func TestMaximizeBadInput(t *testing.T) {
	f := Func(func(x, g []float64) float64 { return 0 })
	cases := []struct {
		lower, upper []float64
		opts         Options
		want         string
	}{
		{nil, nil, Options{}, "box has 0"},
		{[]float64{0, 0}, []float64{1}, Options{}, "2 lower and 1 upper"},
		{[]float64{0, 2}, []float64{1, 1}, Options{}, "dimension 1"},
		{[]float64{0, math.NaN()}, []float64{1, 1}, Options{}, "dimension 1"},
		{[]float64{0}, []float64{1}, Options{Restarts: -1}, "negative"},
		{[]float64{0}, []float64{1}, Options{Workers: -2}, "negative"},
		{[]float64{0}, []float64{1}, Options{Starts: [][]float64{{0.5, 0.5}}}, "start 0 has 2"},
		{[]float64{0}, []float64{1}, Options{Starts: [][]float64{{0.5}, {math.NaN()}}}, "start 1 has NaN"},
	}
	for _, c := range cases {
		_, err := Maximize(f, c.lower, c.upper, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Maximize(%v, %v, %+v): error %v, want %q", c.lower, c.upper, c.opts, err, c.want)
		}
	}
	if _, err := ParseKind("pi"); err == nil {
		t.Error("ParseKind accepted an unknown acquisition")
	}
}

func TestHalton(t *testing.T) {
	const n, d = 1024, 30
	h := NewHalton(d, 1)
	sum := make([]float64, d)
	pt := make([]float64, d)
	first := make([]float64, d)
	for i := 0; i < n; i++ {
		h.Next(pt)
		if i == 0 {
			copy(first, pt)
		}
		for k, v := range pt {
			if v < 0 || v >= 1 {
				t.Fatalf("point %d coordinate %d = %v outside [0,1)", i, k, v)
			}
			sum[k] += v
		}
	}
	for k := range sum {
		// A uniform sample of 1024 points has mean 0.5 ± 0.009 (1 sd);
		// the scrambled sequence is far closer.
		if m := sum[k] / n; math.Abs(m-0.5) > 0.01 {
			t.Errorf("dimension %d: mean %v", k, m)
		}
	}
	again := NewHalton(d, 1)
	again.Next(pt)
	if !slices.Equal(pt, first) {
		t.Error("same seed, different sequence")
	}
	other := NewHalton(d, 2)
	other.Next(pt)
	if slices.Equal(pt, first) {
		t.Error("different seeds, same sequence")
	}
}

func TestBestF(t *testing.T) {
	f := readFixture(t, "normalize.npz", "y", "q90")
	if got, want := QuantileBest(f["y"], 0.9), f["q90"][0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("QuantileBest(0.9) = %v, numpy %v", got, want)
	}
	if got := BestObserved([]float64{1, 5, -2}); got != 5 {
		t.Errorf("BestObserved = %v", got)
	}
}

// TestAcquisitionExtremeInputs: EI and log-EI and their derivatives are
// finite for any finite mean, variance and incumbent, and keep their
// limits: EI = mean - bestF far above the incumbent (σ → 0), 0 far below.
func TestAcquisitionExtremeInputs(t *testing.T) {
	big := math.MaxFloat64
	values := []float64{-big, -1e308, -1e200, -1, 0, 1e-300, 1, 1e200, 1e308, big}
	variances := []float64{0, 1e-300, 1e-40, 1, 1e200, big}
	finite := func(v ...float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	for _, mean := range values {
		for _, bestF := range values {
			for _, variance := range variances {
				v, dm, dv := EI(mean, variance, bestF)
				l, ldm, ldv := LogEI(mean, variance, bestF)
				if !finite(v, dm, dv, l, ldm, ldv) || v < 0 {
					t.Errorf("EI(%g, %g, %g) = %v, %v, %v; LogEI %v, %v, %v", mean, variance, bestF, v, dm, dv, l, ldm, ldv)
				}
			}
		}
	}
	if v, _, _ := EI(1e300, 1e-40, 0); v != 1e300 {
		t.Errorf("EI(1e300, 1e-40, 0) = %v, want 1e300", v)
	}
	if v, _, _ := EI(big, 0, -big); v != big {
		t.Errorf("EI(max, 0, -max) = %v, want max (the improvement, clamped)", v)
	}
	if l, _, _ := LogEI(1e200, 1, 0); math.Abs(l-math.Log(1e200)) > 1e-12*math.Log(1e200) {
		t.Errorf("LogEI(1e200, 1, 0) = %v, want log 1e200", l)
	}
	if l, _, _ := LogEI(-1e300, 1, 0); !(l < -1e199) {
		t.Errorf("LogEI(-1e300, 1, 0) = %v, want below -1e199", l)
	}
}
