package gp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// grownAgainstNew compares a model conditioned with growth against New on
// all n points (x, y) with the grown model's inducing points: predictions
// and log likelihood within conditionTol.
func grownAgainstNew(t *testing.T, name string, grown *Model, x *mat.Dense, y []float64, spec Spec, h Hyper) {
	t.Helper()
	spec.Inducing = grown.Inducing()
	all, err := New(x, y, spec, h)
	if err != nil {
		t.Fatal(err)
	}
	dm, dv := worstGap(grown, all, 200, 5)
	dl := math.Abs(grown.LogLik() - all.LogLik())
	t.Logf("%s: %d inducing points; largest difference from New: mean %.1e, variance %.1e, log likelihood %.1e",
		name, spec.Inducing.RawMatrix().Rows, dm, dv, dl)
	if dm > conditionTol || dv > conditionTol {
		t.Errorf("%s: predictions differ from New with the grown inducing points by %.2e (mean) and %.2e (variance), want <= %g",
			name, dm, dv, conditionTol)
	}
	if dl > conditionTol*math.Abs(all.LogLik()) {
		t.Errorf("%s: log likelihood %.12g, New %.12g", name, grown.LogLik(), all.LogLik())
	}
}

// TestConditionGrowEqualsNew: a Titsias model on the first points,
// conditioned with growth on the rest (in one call and in several), holds
// the fit's inducing points followed by exactly the new points whose
// Nyström residual exceeded the tolerance, and predicts as New on all the
// points with those inducing points (RBF and Matérn, with and without
// warping); the model conditioned from is unchanged.
func TestConditionGrowEqualsNew(t *testing.T) {
	const n, n0, d, m = 70, 45, 3, 12
	x, y := randomProblem(n, d, 21)
	// A new point equal to an inducing point must not be added.
	z := KMeans(x.Slice(0, n0, 0, d).(*mat.Dense), m, 5, 2)
	x.SetRow(n0+3, z.RawRowView(4))
	for _, kernel := range []Kernel{RBF, Matern52} {
		for _, warp := range []bool{false, true} {
			name := kernel.String()
			if warp {
				name += "-warp"
			}
			t.Run(name, func(t *testing.T) {
				spec := Spec{Kernel: kernel, Warp: warp, Approximation: Titsias, Inducing: z}
				h := testHyper(d, warp)
				first, err := New(mat.DenseCopyOf(x.Slice(0, n0, 0, d)), y[:n0], spec, h)
				if err != nil {
					t.Fatal(err)
				}
				once, err := first.ConditionGrow(rowsOf(x, n0, n), y[n0:], DefaultGrowTol)
				if err != nil {
					t.Fatal(err)
				}
				if r, _ := first.Inducing().Dims(); r != m || first.Points() != n0 {
					t.Errorf("the model conditioned from changed: %d inducing points, %d points", r, first.Points())
				}
				// Which points should have become inducing points: those the
				// inducing set before them leaves unexplained by more than the tolerance.
				want := mat.DenseCopyOf(z)
				for i := n0; i < n; i++ {
					sp := spec
					sp.Inducing = want
					probe, err := New(mat.DenseCopyOf(x.Slice(0, i, 0, d)), y[:i], sp, h)
					if err != nil {
						t.Fatal(err)
					}
					if probe.residualShare(x.RawRowView(i)) > DefaultGrowTol {
						r, _ := want.Dims()
						grown := mat.NewDense(r+1, d, nil)
						grown.Slice(0, r, 0, d).(*mat.Dense).Copy(want)
						grown.SetRow(r, x.RawRowView(i))
						want = grown
					}
				}
				if !mat.Equal(once.Inducing(), want) {
					wr, _ := want.Dims()
					gr, _ := once.Inducing().Dims()
					t.Fatalf("inducing points after growth: %d, want %d (the fit's %d and the new points beyond the tolerance)", gr, wr, m)
				}
				if r, _ := want.Dims(); r == m || r == m+n-n0 {
					t.Fatalf("%d of %d new points became inducing points: the test needs some added and some not", r-m, n-n0)
				}
				grownAgainstNew(t, "one call", once, x, y, spec, h)
				split := first
				for _, cut := range [][2]int{{n0, n0 + 1}, {n0 + 1, n0 + 9}, {n0 + 9, n}} {
					if split, err = split.ConditionGrow(rowsOf(x, cut[0], cut[1]), y[cut[0]:cut[1]], DefaultGrowTol); err != nil {
						t.Fatal(err)
					}
				}
				grownAgainstNew(t, "three calls", split, x, y, spec, h)
			})
		}
	}
}

// residualShare returns (s - q(x))/s for the raw input x: the share of its
// prior variance that m's inducing points leave unexplained.
func (m *Model) residualShare(x []float64) float64 {
	xh := make([]float64, m.Dim())
	m.scale(x, xh, nil)
	k, _ := m.post.crossCov(m.kernel, xh)
	_, q := m.post.cond.explained(k)
	return (m.post.s - q) / m.post.s
}

// TestConditionGrowRemovesTheFloor is why growth exists: observing one
// point far from every inducing point many times leaves the fixed-inducing
// posterior's variance there at its floor s - q(x), while the grown one's
// falls toward the noise's share.
func TestConditionGrowRemovesTheFloor(t *testing.T) {
	const n, d, m = 60, 2, 6
	x, y := randomProblem(n, d, 5)
	z := KMeans(x, m, 5, 1)
	h := testHyper(d, false)
	model, err := New(x, y, Spec{Kernel: RBF, Approximation: Titsias, Inducing: z}, h)
	if err != nil {
		t.Fatal(err)
	}
	far := []float64{1.05, -0.05}
	floor := model.residualShare(far) * h.Outputscale
	fixed, grown := model, model
	for i := 0; i < 20; i++ {
		if fixed, err = fixed.Condition([][]float64{far}, []float64{1}); err != nil {
			t.Fatal(err)
		}
		if grown, err = grown.ConditionGrow([][]float64{far}, []float64{1}, DefaultGrowTol); err != nil {
			t.Fatal(err)
		}
	}
	_, vFixed := fixed.Predict(far)
	_, vGrown := grown.Predict(far)
	t.Logf("variance at the observed point: fixed %.4g (floor %.4g), grown %.4g (noise %g / 20 = %.4g)",
		vFixed, floor, vGrown, h.Noise, h.Noise/20)
	if vFixed < floor*(1-1e-9) {
		t.Errorf("fixed inducing points: variance %.6g below the floor %.6g", vFixed, floor)
	}
	if vGrown > 1.5*h.Noise/20 {
		t.Errorf("grown inducing points: variance %.4g, want about the noise's %.4g", vGrown, h.Noise/20)
	}
	if r, _ := grown.Inducing().Dims(); r != m+1 {
		t.Errorf("%d inducing points after observing one new point 20 times, want %d", r, m+1)
	}
}

// TestConditionGrowManyUpdates adds 300 points one call at a time with
// growth to a model of 20 and compares with New: the bordered factors stay
// within the tolerance as the inducing set grows by hundreds.
func TestConditionGrowManyUpdates(t *testing.T) {
	const n0, extra, d, m = 20, 300, 2, 15
	x, y := randomProblem(n0+extra, d, 31)
	spec := Spec{Kernel: Matern52, Approximation: Titsias, Inducing: KMeans(x.Slice(0, n0, 0, d).(*mat.Dense), m, 5, 3)}
	h := testHyper(d, true)
	spec.Warp = true
	model, err := New(mat.DenseCopyOf(x.Slice(0, n0, 0, d)), y[:n0], spec, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := n0; i < n0+extra; i++ {
		if model, err = model.ConditionGrow(rowsOf(x, i, i+1), y[i:i+1], DefaultGrowTol); err != nil {
			t.Fatalf("update %d: %v", i-n0+1, err)
		}
	}
	if r, _ := model.Inducing().Dims(); r <= m+10 {
		t.Fatalf("only %d of %d new points became inducing points", r-m, extra)
	}
	grownAgainstNew(t, "300 updates", model, x, y, spec, h)
}

// TestConditionGrowOtherModels: ConditionGrow on an exact GP is Condition;
// FITC and a bad tolerance are refused with errors saying why.
func TestConditionGrowOtherModels(t *testing.T) {
	x, y := randomProblem(40, 2, 8)
	h := testHyper(2, false)
	exact, err := New(mat.DenseCopyOf(x.Slice(0, 30, 0, 2)), y[:30], Spec{Kernel: RBF}, h)
	if err != nil {
		t.Fatal(err)
	}
	a, err := exact.ConditionGrow(rowsOf(x, 30, 40), y[30:], DefaultGrowTol)
	if err != nil {
		t.Fatal(err)
	}
	b, err := exact.Condition(rowsOf(x, 30, 40), y[30:])
	if err != nil {
		t.Fatal(err)
	}
	if dm, dv := worstGap(a, b, 50, 2); dm != 0 || dv != 0 {
		t.Errorf("exact GP: ConditionGrow differs from Condition by %g, %g", dm, dv)
	}
	fitc, err := New(x, y, Spec{Kernel: RBF, Approximation: FITC, Inducing: KMeans(x, 5, 5, 1)}, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fitc.ConditionGrow(rowsOf(x, 0, 1), y[:1], DefaultGrowTol); err == nil || !strings.Contains(err.Error(), "Titsias") {
		t.Errorf("FITC: error %v, want one naming the Titsias posterior", err)
	}
	for _, tol := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := exact.ConditionGrow(rowsOf(x, 0, 1), y[:1], tol); err == nil || !strings.Contains(err.Error(), "tolerance") {
			t.Errorf("tolerance %v: error %v", tol, err)
		}
	}
}
