package models

import (
	"math"
	"math/rand/v2"
	"testing"

	fixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestKL compares the KL term and its gradients with the fixture (1e-12 relative).
func TestKL(t *testing.T) {
	fx := fixture.Load(t, "models", "kl.npz")
	sc := torch.NewScope()
	defer sc.Close()
	mu := sc.Own(fx["mu"].Clone().Detach()).SetRequiresGrad(true)
	s := sc.Own(fx["log_std"].Clone().Detach()).SetRequiresGrad(true)
	kl := KL(mu, s)
	if got, want := scalar(t, kl), scalar(t, fx["value"]); !closeTo(got, want, 1e-12) {
		t.Errorf("KL = %.15g, want %.15g", got, want)
	}
	if err := kl.Backward(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    *torch.Tensor
		want string
	}{{mu, "grad_mu"}, {s, "grad_log_std"}} {
		g, err := c.p.Grad()
		if err != nil || g == nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		got, want := fixture.Float64s(t, sc.Own(g)), fixture.Float64s(t, fx[c.want])
		for i := range got {
			if !closeTo(got[i], want[i], 1e-12) {
				t.Fatalf("%s[%d] = %v, want %v", c.want, i, got[i], want[i])
			}
		}
	}
}

// TestBetaSchedule compares the closed form with the reference's step-by-step
// update over 3000 steps (1e-9 relative: powers versus repeated products).
func TestBetaSchedule(t *testing.T) {
	fx := fixture.Load(t, "models", "beta_schedule.npz")
	p := fixture.Float64s(t, fx["params"])
	b := BetaSchedule{Init: p[0], Final: p[1], Warmup: int(p[2]), Every: int(p[3]), Factor: p[4]}
	if b != AnnealedBeta(1e-6, 0.04, 500) {
		t.Errorf("fixture schedule %+v differs from the expression schedule %+v", b, AnnealedBeta(1e-6, 0.04, 500))
	}
	for step, want := range fixture.Float64s(t, fx["beta"]) {
		if got := b.At(step); !closeTo(got/want, 1, 1e-9) {
			t.Fatalf("step %d: beta %v, want %v", step, got, want)
		}
	}
	if got := FixedBeta(0.04).At(10000); got != 0.04 {
		t.Errorf("fixed beta: %v", got)
	}
	for _, bad := range []BetaSchedule{{Init: -1, Final: 1}, {Init: 1, Final: 0.5}, {Init: 1e-6, Final: 1, Every: 0, Factor: 1.1},
		{Init: 0, Final: 1, Every: 10, Factor: 1.1}, {Init: 0, Final: 1, Every: 10, Step: -0.1}, {Init: 0, Final: 1, Every: 0, Step: 0.1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestLinearBetaFastMolVAE replays fast_molvae's vae_train.py loop (beta used
// by a step, then raised after 1-based step s when s % 2000 == 0 and
// s >= 40000, capped at 1) and compares every step with the closed form.
func TestLinearBetaFastMolVAE(t *testing.T) {
	b := LinearBeta(0, 1, 0.002, 2000, 39999)
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	beta := 0.0
	for step := 0; step < 1100000; step++ {
		if got := b.At(step); math.Abs(got-beta) > 1e-12 {
			t.Fatalf("0-based step %d: beta %v, fast_molvae %v", step, got, beta)
		}
		if s := step + 1; s%2000 == 0 && s >= 40000 {
			beta = math.Min(1, beta+0.002)
		}
	}
	if beta != 1 {
		t.Fatalf("the replay never reached max_beta: %v", beta)
	}
}

func TestKeepLabels(t *testing.T) {
	labels := []float64{1, 2, math.NaN(), 4, 5, 6, 7, 8, 9, 10}
	got, err := KeepLabels(labels, 0.5, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for i, y := range got {
		if !math.IsNaN(y) {
			kept++
			if y != labels[i] {
				t.Errorf("label %d changed to %v", i, y)
			}
		}
	}
	if kept != 5 { // round(0.5 * 9)
		t.Errorf("kept %d labels, want 5: %v", kept, got)
	}
	if got, _ := KeepLabels(labels, 0.01, rand.New(rand.NewPCG(1, 1))); countLabelled(got) != 1 {
		t.Errorf("a tiny fraction must keep one label: %v", got)
	}
	if _, err := KeepLabels(labels, 1.5, nil); err == nil {
		t.Error("fraction 1.5: no error")
	}
}

func countLabelled(ys []float64) int {
	n := 0
	for _, y := range ys {
		if !math.IsNaN(y) {
			n++
		}
	}
	return n
}

// TestLastBeta: the KL weight a training ended at, from its step count, for
// fast_molvae's schedule stopped after 10 ZINC epochs (65,200 steps: 0.026,
// the shipped molecule-lbo.pt's), after one step, before any, and for a
// finished annealing.
func TestLastBeta(t *testing.T) {
	molvae := LinearBeta(0, 1, 0.002, 2000, 39999)
	expr := AnnealedBeta(1e-6, 0.04, 500)
	for _, c := range []struct {
		s    TrainingState
		want float64
	}{
		{TrainingState{Beta: molvae, Step: 65200}, 0.026},
		{TrainingState{Beta: molvae, Step: 40000}, 0},
		{TrainingState{Beta: molvae, Step: 40001}, 0.002},
		{TrainingState{Beta: expr, Step: 0}, 1e-6},
		{TrainingState{Beta: expr, Step: 100000}, 0.04},
		{TrainingState{Beta: FixedBeta(1e-3), Step: 6520}, 1e-3},
	} {
		if got := c.s.LastBeta(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v after %d steps: %v, want %v", c.s.Beta, c.s.Step, got, c.want)
		}
	}
}
