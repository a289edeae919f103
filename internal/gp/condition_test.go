package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// conditionFlavours are the models Condition serves: SGPR (Titsias), FITC
// and the exact GP, each with and without input warping.
func conditionFlavours() []struct {
	name   string
	approx Approximation
	sparse bool
	warp   bool
} {
	var out []struct {
		name   string
		approx Approximation
		sparse bool
		warp   bool
	}
	for _, f := range []struct {
		approx Approximation
		sparse bool
	}{{Titsias, true}, {FITC, true}, {"", false}} {
		for _, warp := range []bool{false, true} {
			name := string(f.approx)
			if !f.sparse {
				name = "exact"
			}
			if warp {
				name += "-warp"
			}
			out = append(out, struct {
				name   string
				approx Approximation
				sparse bool
				warp   bool
			}{name, f.approx, f.sparse, warp})
		}
	}
	return out
}

// rowsOf returns rows lo..hi of x as slices.
func rowsOf(x *mat.Dense, lo, hi int) [][]float64 {
	out := make([][]float64, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, append([]float64(nil), x.RawRowView(i)...))
	}
	return out
}

// worstGap returns the largest differences between the predictions (mean
// and variance, point by point and batched) of two models at q random
// points of the unit box, slightly beyond it too.
func worstGap(a, b *Model, q int, seed uint64) (dMean, dVar float64) {
	d := a.Dim()
	rng := rand.New(rand.NewPCG(seed, 3))
	u := mat.NewDense(q, d, nil)
	for i := 0; i < q; i++ {
		for k := 0; k < d; k++ {
			u.Set(i, k, 1.2*rng.Float64()-0.1)
		}
	}
	ma, va, mb, vb := make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q)
	a.PredictBatch(u, ma, va)
	b.PredictBatch(u, mb, vb)
	for i := 0; i < q; i++ {
		m1, v1 := a.Predict(u.RawRowView(i))
		m2, v2 := b.Predict(u.RawRowView(i))
		dMean = math.Max(dMean, math.Max(math.Abs(m1-m2), math.Abs(ma[i]-mb[i])))
		dVar = math.Max(dVar, math.Max(math.Abs(v1-v2), math.Abs(va[i]-vb[i])))
	}
	return dMean, dVar
}

// conditionTol is the agreement asked of a conditioned posterior and one
// built from scratch on the same points. Both are computed in float64 from
// factors of P (or K + σ²I) whose condition number is up to about 5e5 here
// (gonum's estimate; noise 0.05 against an output scale 1.3, 1e-6 jitter
// on K_uu), so each carries rounding of about κ ε ≈ 1e-10 on means and
// variances of order one (measured: at most 5e-12, also after 500 updates);
// 1e-8 leaves a margin for that, while a wrong update (a missing point,
// FITC's λ taken as σ², C not updated) moves them by 1e-3 or more.
const conditionTol = 1e-8

// TestConditionEqualsNew: a model built on the first points and conditioned
// on the rest predicts as New on all of them (mean and variance at random
// points, log likelihood), for every flavour, the points joining in one
// call or in several; the model conditioned from is unchanged.
func TestConditionEqualsNew(t *testing.T) {
	const n, n0, d, m = 70, 45, 3, 12
	x, y := randomProblem(n, d, 21)
	z := KMeans(x.Slice(0, n0, 0, d).(*mat.Dense), m, 5, 2)
	for _, f := range conditionFlavours() {
		t.Run(f.name, func(t *testing.T) {
			spec := Spec{Kernel: RBF, Warp: f.warp, Approximation: f.approx}
			if f.sparse {
				spec.Inducing = z
			}
			h := testHyper(d, f.warp)
			all, err := New(x, y, spec, h)
			if err != nil {
				t.Fatal(err)
			}
			first, err := New(mat.DenseCopyOf(x.Slice(0, n0, 0, d)), y[:n0], spec, h)
			if err != nil {
				t.Fatal(err)
			}
			m0, v0 := first.Predict([]float64{0.3, 0.6, 0.2})
			once, err := first.Condition(rowsOf(x, n0, n), y[n0:])
			if err != nil {
				t.Fatal(err)
			}
			if m1, v1 := first.Predict([]float64{0.3, 0.6, 0.2}); m1 != m0 || v1 != v0 || first.Points() != n0 {
				t.Errorf("the model conditioned from changed: %d points, prediction (%v, %v) then (%v, %v)", first.Points(), m0, v0, m1, v1)
			}
			split := first
			for _, cut := range [][2]int{{n0, n0 + 1}, {n0 + 1, n0 + 9}, {n0 + 9, n}} {
				if split, err = split.Condition(rowsOf(x, cut[0], cut[1]), y[cut[0]:cut[1]]); err != nil {
					t.Fatal(err)
				}
			}
			for name, c := range map[string]*Model{"one call": once, "three calls": split} {
				if c.Points() != n {
					t.Errorf("%s: %d points, want %d", name, c.Points(), n)
				}
				dm, dv := worstGap(c, all, 200, 5)
				t.Logf("%s: largest difference from New on all points: mean %.1e, variance %.1e, log likelihood %.1e",
					name, dm, dv, math.Abs(c.LogLik()-all.LogLik()))
				if dm > conditionTol || dv > conditionTol {
					t.Errorf("%s: predictions differ from New on all points by %.2e (mean) and %.2e (variance), want <= %g",
						name, dm, dv, conditionTol)
				}
				if math.Abs(c.LogLik()-all.LogLik()) > conditionTol*math.Abs(all.LogLik()) {
					t.Errorf("%s: log likelihood %.12g, New on all points %.12g", name, c.LogLik(), all.LogLik())
				}
			}
			if dm, dv := worstGap(first, all, 200, 5); dm < 1e-3 && dv < 1e-3 {
				t.Errorf("the first %d points' model predicts as the model of all %d (%.1e, %.1e): the test cannot tell", n0, n, dm, dv)
			}
		})
	}
}

// TestConditionManyUpdates adds 500 points one call at a time to a model of
// 20 and compares with New on all 520: the rank-one updates of the sparse
// factors and the bordered exact factor stay within the same tolerance
// (rounding grows with the number of updates, which 1e-8 must absorb).
func TestConditionManyUpdates(t *testing.T) {
	const n0, extra, d, m = 20, 500, 2, 15
	x, y := randomProblem(n0+extra, d, 31)
	z := KMeans(x, m, 5, 3)
	for _, f := range conditionFlavours() {
		t.Run(f.name, func(t *testing.T) {
			spec := Spec{Kernel: Matern52, Warp: f.warp, Approximation: f.approx}
			if f.sparse {
				spec.Inducing = z
			}
			h := testHyper(d, f.warp)
			model, err := New(mat.DenseCopyOf(x.Slice(0, n0, 0, d)), y[:n0], spec, h)
			if err != nil {
				t.Fatal(err)
			}
			for i := n0; i < n0+extra; i++ {
				if model, err = model.Condition(rowsOf(x, i, i+1), y[i:i+1]); err != nil {
					t.Fatalf("update %d: %v", i-n0+1, err)
				}
			}
			all, err := New(x, y, spec, h)
			if err != nil {
				t.Fatal(err)
			}
			dm, dv := worstGap(model, all, 200, 6)
			t.Logf("after %d updates: largest difference mean %.1e, variance %.1e", extra, dm, dv)
			if dm > conditionTol || dv > conditionTol {
				t.Errorf("after %d updates predictions differ from New by %.2e (mean) and %.2e (variance), want <= %g",
					extra, dm, dv, conditionTol)
			}
		})
	}
}

// TestConditionRefusesBadInput: a NaN or infinite target or input, a point
// of the wrong dimension and mismatched lengths are refused with an error
// naming the point and what is wrong, and an empty conditioning returns
// the model itself.
func TestConditionRefusesBadInput(t *testing.T) {
	x, y := randomProblem(30, 2, 41)
	for _, sparse := range []bool{true, false} {
		spec := Spec{Kernel: RBF}
		if sparse {
			spec.Inducing = KMeans(x, 6, 5, 1)
		}
		model, err := New(x, y, spec, testHyper(2, false))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			x    [][]float64
			y    []float64
			want string
		}{
			{[][]float64{{0.1, 0.2}, {0.3, 0.4}}, []float64{0, math.NaN()}, "target 1 is NaN"},
			{[][]float64{{0.1, 0.2}}, []float64{math.Inf(1)}, "target 0 is +Inf"},
			{[][]float64{{0.1, 0.2}, {0.3}}, []float64{0, 1}, "input 1 has 1 values for a 2-dimensional model"},
			{[][]float64{{0.1, math.NaN()}}, []float64{0}, "input 0 has NaN or Inf"},
			{[][]float64{{0.1, 0.2}}, []float64{0, 1}, "1 inputs and 2 targets"},
		} {
			got, err := model.Condition(c.x, c.y)
			if err == nil || got != nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("sparse %v, condition on %v, %v: (%v, %v), want an error containing %q", sparse, c.x, c.y, got, err, c.want)
			}
		}
		if got, err := model.Condition(nil, nil); got != model || err != nil {
			t.Errorf("sparse %v: empty conditioning gave (%p, %v), want the model itself", sparse, got, err)
		}
	}
}

// TestConditionOnFit: a fitted model conditioned on new points equals New
// with its hyperparameters and inducing points on all of them.
func TestConditionOnFit(t *testing.T) {
	x, y := randomProblem(90, 2, 51)
	for _, opts := range []Options{{Inducing: 12, Seed: 1}, {Inducing: 12, Seed: 1, Approximation: FITC}, {Seed: 1}} {
		t.Run(fmt.Sprintf("inducing %d %s", opts.Inducing, opts.Approximation), func(t *testing.T) {
			opts.MaxIter = 30
			fit, err := Fit(mat.DenseCopyOf(x.Slice(0, 60, 0, 2)), y[:60], opts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := fit.Condition(rowsOf(x, 60, 90), y[60:])
			if err != nil {
				t.Fatal(err)
			}
			all, err := New(x, y, Spec{Kernel: fit.Kernel(), Inducing: fit.Inducing(), Approximation: fit.Approximation()}, fit.Hyper())
			if err != nil {
				t.Fatal(err)
			}
			if dm, dv := worstGap(c, all, 100, 7); dm > conditionTol || dv > conditionTol {
				t.Errorf("conditioned fit differs from New on all points by %.2e (mean) and %.2e (variance)", dm, dv)
			}
			if c.Info() != fit.Info() {
				t.Errorf("conditioning changed the fit's record: %+v, was %+v", c.Info(), fit.Info())
			}
		})
	}
}
