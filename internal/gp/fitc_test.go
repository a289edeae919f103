package gp

import (
	"testing"
)

// TestFITCMatchesTorch compares the FITC objective, its gradient in every
// parameter (length-scales, output scale, mean, noise, inducing points,
// warping) and the FITC predictions with the independent dense torch
// implementation of GPyTorch 1.3.0's training objective in
// make_fitc_fixture.py. Tolerances: 1e-9 relative for the objective and the
// means, 1e-7 relative (1e-9 absolute) for the gradient, 1e-8 absolute for
// variances.
func TestFITCMatchesTorch(t *testing.T) {
	f := openFixture(t, "fitc_torch.npz")
	x, y, z, xt := f.mat("X"), f.vec("y"), f.mat("Z"), f.mat("Xt")
	for _, k := range []Kernel{RBF, Matern52} {
		for _, warp := range []bool{false, true} {
			key := k.String()
			if warp {
				key = "warp_" + key
			}
			t.Run(key, func(t *testing.T) {
				spec := Spec{Kernel: k, Inducing: z, Warp: warp, NoPriors: true, Approximation: FITC}
				o, err := NewObjective(x, y, spec)
				if err != nil {
					t.Fatal(err)
				}
				theta := f.vec("theta_" + key)
				grad := make([]float64, len(theta))
				v, err := o.Eval(theta, grad)
				if err != nil {
					t.Fatal(err)
				}
				assertClose(t, "objective", []float64{v}, []float64{f.scalar("fitc_" + key)}, 1e-9, 0)
				assertClose(t, "gradient", grad, f.vec("grad_"+key), 1e-7, 1e-9)

				h, _ := o.Unpack(theta)
				m, err := New(x, y, spec, h)
				if err != nil {
					t.Fatal(err)
				}
				if m.Approximation() != FITC {
					t.Errorf("model approximation %q, want fitc", m.Approximation())
				}
				checkPredictions(t, m, xt, f.vec("mean_"+key), f.vec("var_"+key), 1e-9, 1e-8)
			})
		}
	}
}

func TestParseApproximation(t *testing.T) {
	for name, want := range map[string]Approximation{"": DefaultApproximation, "titsias": Titsias, "fitc": FITC} {
		if got, err := ParseApproximation(name); err != nil || got != want {
			t.Errorf("%q: %q, %v", name, got, err)
		}
	}
	if _, err := ParseApproximation("vfe"); err == nil {
		t.Error("unknown approximation: no error")
	}
	x, y := randomProblem(10, 2, 1)
	if _, err := NewObjective(x, y, Spec{Kernel: RBF, Inducing: x, Approximation: "dtc"}); err == nil {
		t.Error("NewObjective accepted an unknown approximation")
	}
}

// TestFitFITC fits both sparse objectives on a small problem: each must
// reach a higher value of its own objective than the other's optimum does,
// and a warm refit keeps the approximation.
func TestFitFITC(t *testing.T) {
	x, y := randomProblem(150, 3, 5)
	models := map[Approximation]*Model{}
	for _, a := range []Approximation{Titsias, FITC} {
		m, err := Fit(x, y, Options{Inducing: 15, Seed: 2, Approximation: a, NoPriors: true})
		if err != nil {
			t.Fatal(err)
		}
		if m.Approximation() != a {
			t.Fatalf("fitted %q, want %q", m.Approximation(), a)
		}
		models[a] = m
	}
	for _, a := range []Approximation{Titsias, FITC} {
		other := models[Titsias]
		if a == Titsias {
			other = models[FITC]
		}
		at, err := New(x, y, Spec{Kernel: RBF, Inducing: other.Inducing(), NoPriors: true, Approximation: a}, other.Hyper())
		if err != nil {
			t.Fatal(err)
		}
		if models[a].LogLik() < at.LogLik() {
			t.Errorf("%s: fitted objective %.6g below its value %.6g at the other fit", a, models[a].LogLik(), at.LogLik())
		}
	}
	warm, err := Fit(x, y, Options{Inducing: 15, Approximation: FITC, Init: models[FITC].WarmStart(), NoPriors: true})
	if err != nil || warm.Approximation() != FITC || warm.LogLik() < models[FITC].LogLik()-1e-6 {
		t.Errorf("warm FITC refit: %v, approximation %q, objective %v (from %v)", err, warm.Approximation(), warm.LogLik(), models[FITC].LogLik())
	}
}
