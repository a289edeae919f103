package models

import (
	"fmt"
	"github.com/tlbo-native/tlbo-native/internal/fixture"
	"math"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

func scalar(t *testing.T, x *torch.Tensor) float64 {
	t.Helper()
	v, err := x.Item()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// closeTo reports whether got is within tol of want, relative to max(1, |want|).
func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// metricFuncs are the losses under test, by fixture name.
func metricFuncs(eta, nu, margin float64) map[string]func(z, y *torch.Tensor) *torch.Tensor {
	return map[string]func(z, y *torch.Tensor) *torch.Tensor{
		"simple":           func(z, y *torch.Tensor) *torch.Tensor { return SimpleLoss(z, y, nil) },
		"contrastive":      Metric{Kind: MetricContrastive, Eta: eta}.Loss,
		"hard_contrastive": Metric{Kind: MetricHardContrastive, Eta: eta}.Loss,
		"triplet":          Metric{Kind: MetricTriplet, Eta: eta}.Loss,
		"triplet_nu":       Metric{Kind: MetricTriplet, Eta: eta, Nu: nu}.Loss,
		"hard_triplet":     Metric{Kind: MetricHardTriplet, Eta: eta, Margin: margin}.Loss,
		"log_ratio":        Metric{Kind: MetricLogRatio}.Loss,
	}
}

// lossAndGrad evaluates a loss at z (as dtype) and returns its value and dL/dz.
func lossAndGrad(t *testing.T, f func(z, y *torch.Tensor) *torch.Tensor, z, y *torch.Tensor, dtype torch.DType) (float64, []float64) {
	t.Helper()
	sc := torch.NewScope()
	defer sc.Close()
	zz := sc.Own(z.ToDType(dtype).Detach().Clone()).SetRequiresGrad(true)
	loss := f(zz, sc.Own(y.ToDType(dtype)))
	v := scalar(t, loss)
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	g, err := zz.Grad()
	if err != nil || g == nil {
		t.Fatalf("no gradient: %v", err)
	}
	defer g.Close()
	return v, fixture.Float64s(t, g)
}

// TestMetricLossesMatchFixtures compares every metric loss and its gradient with
// the independent loop-based reference of gen_fixtures.py. Tolerances: float64
// 1e-10 relative for values and gradients; float32 2e-4 relative.
func TestMetricLossesMatchFixtures(t *testing.T) {
	fx := fixture.Load(t, "models", "metric_losses.npz")
	nu, margin := scalar(t, fx["nu"]), scalar(t, fx["margin"])
	for c := range 2 {
		p := fmt.Sprintf("case%d_", c)
		z, y := fx[p+"z"], fx[p+"y"]
		for name, f := range metricFuncs(scalar(t, fx[p+"eta"]), nu, margin) {
			want, wantGrad := scalar(t, fx[p+name+"_value"]), fixture.Float64s(t, fx[p+name+"_grad"])
			for _, dt := range []struct {
				dtype torch.DType
				tol   float64
			}{{torch.Float64, 1e-10}, {torch.Float32, 2e-4}} {
				got, grad := lossAndGrad(t, f, z, y, dt.dtype)
				if !closeTo(got, want, dt.tol) {
					t.Errorf("%s%s (%s): value %.12g, want %.12g", p, name, dt.dtype, got, want)
				}
				for i := range grad {
					if !closeTo(grad[i], wantGrad[i], dt.tol) {
						t.Errorf("%s%s (%s): grad[%d] = %.12g, want %.12g", p, name, dt.dtype, i, grad[i], wantGrad[i])
						break
					}
				}
			}
		}
	}
}

// TestMetricGradFiniteDifference checks the autograd gradients of every metric
// loss against central differences (h = 1e-6, float64, tolerance 1e-6 relative).
func TestMetricGradFiniteDifference(t *testing.T) {
	fx := fixture.Load(t, "models", "metric_losses.npz")
	z0, y := fixture.Float64s(t, fx["case0_z"]), fx["case0_y"]
	shape := fx["case0_z"].Shape()
	value := func(f func(z, y *torch.Tensor) *torch.Tensor, zs []float64) float64 {
		sc := torch.NewScope()
		defer sc.Close()
		return scalar(t, f(sc.Own(torch.FromFloat64(zs, shape...)), y))
	}
	const h = 1e-6
	for name, f := range metricFuncs(scalar(t, fx["case0_eta"]), 0.05, 0.5) {
		_, grad := lossAndGrad(t, f, fx["case0_z"], y, torch.Float64)
		for i := 0; i < len(z0); i += 4 {
			zp, zm := append([]float64(nil), z0...), append([]float64(nil), z0...)
			zp[i] += h
			zm[i] -= h
			fd := (value(f, zp) - value(f, zm)) / (2 * h)
			if !closeTo(grad[i], fd, 1e-6) {
				t.Errorf("%s: grad[%d] = %.10g, finite difference %.10g", name, i, grad[i], fd)
			}
		}
	}
}

func TestMetricBadInput(t *testing.T) {
	z := torch.Zeros([]int64{4, 2}, torch.Float64, torch.CPU)
	defer z.Close()
	y := torch.Zeros([]int64{3}, torch.Float64, torch.CPU)
	defer y.Close()
	if err := (Metric{Kind: MetricTriplet, Eta: 0.1}).Loss(z, y).Err(); err == nil {
		t.Error("mismatched batch sizes: no error")
	}
	for _, m := range []Metric{{Kind: MetricContrastive, Eta: 0}, {Kind: MetricTriplet, Eta: 1.5}, {Kind: "cosine"},
		{Kind: MetricTriplet, Eta: 0.1, Nu: -1}} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
}

func TestParseELBO(t *testing.T) {
	for name, kind := range map[string]MetricKind{"lbo": MetricNone, "tp": MetricNone, "s": MetricSimple,
		"c": MetricContrastive, "lr": MetricLogRatio, "t": MetricTriplet, "T-HARD": MetricHardTriplet} {
		e, err := ParseELBO(name)
		if err != nil || e.Metric.Kind != kind || e.Validate() != nil {
			t.Errorf("%s: %+v, %v", name, e, err)
		}
	}
	if e, _ := ParseELBO("tp"); !e.PredictTarget || !e.NeedsLabels() {
		t.Errorf("tp: %+v", e)
	}
	if e, _ := ParseELBO("lbo"); e.NeedsLabels() {
		t.Errorf("lbo needs labels")
	}
	if _, err := ParseELBO("vae"); err == nil {
		t.Error("unknown ELBO: no error")
	}
}
