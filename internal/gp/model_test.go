package gp

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPredictGradient checks the input gradients of the posterior mean and
// variance against central differences, for every model flavour.
func TestPredictGradient(t *testing.T) {
	const n, d, m = 40, 3, 9
	x, y := randomProblem(n, d, 11)
	z := KMeans(x, m, 5, 1)
	pt := []float64{0.31, 0.62, 0.47}
	for _, kern := range []Kernel{RBF, Matern52} {
		for _, warp := range []bool{false, true} {
			for _, sparse := range []bool{false, true} {
				spec := Spec{Kernel: kern, Warp: warp}
				if sparse {
					spec.Inducing = z
				}
				model, err := New(x, y, spec, testHyper(d, warp))
				if err != nil {
					t.Fatal(err)
				}
				dm, dv := make([]float64, d), make([]float64, d)
				model.PredictGrad(pt, dm, dv)
				for k := 0; k < d; k++ {
					const h = 1e-6
					p, q := append([]float64(nil), pt...), append([]float64(nil), pt...)
					p[k] += h
					q[k] -= h
					mp, vp := model.Predict(p)
					mq, vq := model.Predict(q)
					fdm, fdv := (mp-mq)/(2*h), (vp-vq)/(2*h)
					if math.Abs(fdm-dm[k]) > 1e-6*math.Max(1, math.Abs(fdm)) || math.Abs(fdv-dv[k]) > 1e-6*math.Max(1, math.Abs(fdv)) {
						t.Errorf("%v warp=%v sparse=%v dim %d: dmean %g (fd %g), dvar %g (fd %g)",
							kern, warp, sparse, k, dm[k], fdm, dv[k], fdv)
					}
				}
			}
		}
	}
}

// TestFitRecoversFunction fits exact and sparse GPs to a smooth function and
// checks held-out predictions, warm-start behaviour and determinism.
func TestFitRecoversFunction(t *testing.T) {
	const d = 2
	x, y := randomProblem(300, d, 3)
	xt, yt := randomProblem(100, d, 4)
	for _, opts := range []Options{
		{Inducing: 0, Kernel: RBF, Seed: 1},
		{Inducing: 40, Kernel: RBF, Seed: 1},
		{Inducing: 40, Kernel: Matern52, Seed: 1},
		{Inducing: 40, Kernel: RBF, Warp: true, Seed: 1},
	} {
		model, err := Fit(x, y, opts)
		if err != nil {
			t.Fatal(err)
		}
		if model.Sparse() != (opts.Inducing > 0) {
			t.Fatalf("Sparse() = %v for %d inducing points", model.Sparse(), opts.Inducing)
		}
		rmse := 0.0
		for i := 0; i < 100; i++ {
			mu, _ := model.Predict(xt.RawRowView(i))
			rmse += (mu - yt[i]) * (mu - yt[i])
		}
		rmse = math.Sqrt(rmse / 100)
		info := model.Info()
		t.Logf("%+v: rmse %.4f noise %.4f evals %d status %s", opts, rmse, model.Hyper().Noise, info.Evaluations, info.Status)
		// Noise std is 0.1; a good fit predicts within about that.
		if rmse > 0.15 {
			t.Errorf("%+v: held-out rmse %.3f, want < 0.15", opts, rmse)
		}
		// Warm refit after adding one point needs fewer evaluations.
		x2 := mat.NewDense(301, d, nil)
		x2.Slice(0, 300, 0, d).(*mat.Dense).Copy(x)
		x2.SetRow(300, []float64{0.5, 0.5})
		y2 := append(append([]float64(nil), y...), y[0])
		opts.Init = model.WarmStart()
		warm, err := Fit(x2, y2, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !warm.Info().Warm || warm.Info().Evaluations > info.Evaluations {
			t.Errorf("warm refit: %+v, cold fit %d evaluations", warm.Info(), info.Evaluations)
		}
	}
	// Same seed, same model.
	a, err1 := Fit(x, y, Options{Inducing: 30, Seed: 5, MaxIter: 20})
	b, err2 := Fit(x, y, Options{Inducing: 30, Seed: 5, MaxIter: 20})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if a.LogLik() != b.LogLik() || !mat.Equal(a.Inducing(), b.Inducing()) {
		t.Errorf("two fits with the same seed differ: %v vs %v", a.LogLik(), b.LogLik())
	}
}

func TestBadInput(t *testing.T) {
	x, y := randomProblem(10, 2, 1)
	nanX := mat.DenseCopyOf(x)
	nanX.Set(3, 1, math.NaN())
	infY := append([]float64(nil), y...)
	infY[4] = math.Inf(1)
	cases := []struct {
		name string
		x    *mat.Dense
		y    []float64
		opts Options
		want string
	}{
		{"nil inputs", nil, y, Options{}, "no training inputs"},
		{"one point", mat.NewDense(1, 2, []float64{0.1, 0.2}), []float64{1}, Options{}, "at least 2"},
		{"length mismatch", x, y[:9], Options{}, "10 inputs but 9 targets"},
		{"NaN input", nanX, y, Options{}, "row 3, column 1 is NaN"},
		{"Inf target", x, infY, Options{}, "target 4 is +Inf"},
		{"negative M", x, y, Options{Inducing: -1}, "inducing"},
		{"bad kernel", x, y, Options{Kernel: Kernel(7)}, "unknown kernel"},
	}
	for _, c := range cases {
		_, err := Fit(c.x, c.y, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
	model, err := Fit(x, y, Options{MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Fit(mat.NewDense(10, 3, nil), y, Options{Init: model.WarmStart()})
	if err == nil || !strings.Contains(err.Error(), "2-dimensional model for 3-dimensional") {
		t.Errorf("dimension mismatch of warm start: %v", err)
	}
	halfWarped := model.WarmStart()
	halfWarped.Hyper.WarpA = []float64{1, 1}
	if _, err := Fit(x, y, Options{Init: halfWarped}); err == nil || !strings.Contains(err.Error(), "2 and 0 warping parameters") {
		t.Errorf("warm start with warping a but not b: %v", err)
	}
	wideInducing := &WarmStart{Hyper: model.Hyper(), Inducing: mat.NewDense(4, 3, nil)}
	if _, err := Fit(x, y, Options{Inducing: 4, Init: wideInducing}); err == nil ||
		!strings.Contains(err.Error(), "3-dimensional inducing points for 2-dimensional") {
		t.Errorf("warm start with inducing points of another dimension: %v", err)
	}
	if w := (*Model)(nil).WarmStart(); w != nil {
		t.Errorf("warm start of no model: %+v, want nil", w)
	}
	if _, err := New(x, y, Spec{}, Hyper{Lengthscales: []float64{1, -1}, Outputscale: 1, Noise: 0.1}); err == nil ||
		!strings.Contains(err.Error(), "length-scale 1") {
		t.Errorf("negative length-scale: %v", err)
	}
	if _, err := ParseKernel("cosine"); err == nil {
		t.Error("ParseKernel accepted an unknown kernel")
	}
}

// TestCholeskyJitter: duplicated inducing points make K_uu singular beyond
// the base jitter; the growing jitter still factorises it, and a matrix
// that no jitter can fix gives ErrNotPositiveDefinite.
func TestCholeskyJitter(t *testing.T) {
	x, y := randomProblem(30, 2, 2)
	z := mat.NewDense(6, 2, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.2, 0.2, 0.2, 0.2, 0.9, 0.1})
	h := testHyper(2, false)
	h.Lengthscales = []float64{5, 5} // nearly constant kernel: K_uu has rank ≈ 1
	if _, err := New(x, y, Spec{Inducing: z}, h); err != nil {
		t.Fatalf("duplicated inducing points: %v", err)
	}
	a := newGeneral(2, 2)
	copy(a.Data, []float64{1, 2, 2, -10})
	if _, err := cholesky(a, "test matrix"); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Fatalf("indefinite matrix: %v", err)
	}
}

// TestFitStop: Options.Stop that never answers leaves the fit as it is (the
// same model, bit for bit); one that answers after k evaluations ends the
// fit there with ErrStopped and its error, and no model, also in the
// warped fit's first stage.
func TestFitStop(t *testing.T) {
	x, y := randomProblem(200, 2, 3)
	for _, warp := range []bool{false, true} {
		opts := Options{Inducing: 30, Seed: 5, MaxIter: 20, Warp: warp}
		plain, err := Fit(x, y, opts)
		if err != nil {
			t.Fatal(err)
		}
		asked := 0
		opts.Stop = func() error { asked++; return nil }
		quiet, err := Fit(x, y, opts)
		if err != nil {
			t.Fatal(err)
		}
		if asked == 0 || quiet.LogLik() != plain.LogLik() || !mat.Equal(quiet.Inducing(), plain.Inducing()) {
			t.Errorf("warp %v: a Stop asked %d times that never answers changed the fit: %v against %v",
				warp, asked, quiet.LogLik(), plain.LogLik())
		}
		cause := errors.New("stopped by SIGINT")
		for _, after := range []int{0, 5} {
			asked = 0
			opts.Stop = func() error {
				if asked++; asked > after {
					return cause
				}
				return nil
			}
			m, err := Fit(x, y, opts)
			if m != nil || !errors.Is(err, ErrStopped) || !errors.Is(err, cause) || asked != after+1 {
				t.Errorf("warp %v, stop after %d: model %v, %v, asked %d times", warp, after, m != nil, err, asked)
			}
		}
	}
}
