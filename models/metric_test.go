package models

import (
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	fixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"
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
	if e, _ := ParseELBO("w"); !e.WarpGP || e.NeedsLabels() || e.Metric.Kind != MetricNone {
		t.Errorf("w: %+v, want LBO with a warped GP", e)
	}
	if e, _ := ParseELBO("t"); e.WarpGP {
		t.Errorf("t: %+v, want no warping", e)
	}
	if _, err := ParseELBO("vae"); err == nil {
		t.Error("unknown ELBO: no error")
	}
}

// gatherTripletLoss is the former implementation of the triplet losses, kept as
// an independent reference: it gathers every valid triplet through a
// (B, B, B) mask and sums term(dz_ij - dz_ik) w_p w_n over them.
func gatherTripletLoss(z, y *torch.Tensor, eta, nu float64, term func(*torch.Tensor) *torch.Tensor) *torch.Tensor {
	b := z.Shape()[0]
	dz, dy := pairDistances(z, y)
	pos := dy.LtScalar(eta).LogicalAnd(offDiagonal(z, b))
	neg := dy.GeScalar(eta)
	idx := pos.Unsqueeze(2).LogicalAnd(neg.Unsqueeze(1)).Nonzero() // (V, 3): i, j, k
	stride := own(z, torch.FromInt64([]int64{b}))
	a := idx.Select(1, 0).Mul(stride)
	ij, ik := a.Add(idx.Select(1, 1)), a.Add(idx.Select(1, 2))
	at := func(m, index *torch.Tensor) *torch.Tensor { return m.Reshape(-1).IndexSelect(0, index) }
	terms := term(at(dz, ij).Sub(at(dz, ik)))
	if nu > 0 {
		f := func(t *torch.Tensor) *torch.Tensor { return t.DivScalar(2 * nu).Tanh() }
		wp := f(dy.RSubScalar(eta)).DivScalar(math.Tanh(eta / (2 * nu)))
		wn := f(dy.AddScalar(-eta)).DivScalar(math.Tanh((1 - eta) / (2 * nu)))
		terms = terms.Mul(at(wp, ij).Mul(at(wn, ik)))
	}
	return meanOverPositive(terms)
}

// TestTripletLossesChunked compares the chunked triplet losses with the
// gather-based reference on batches of 200 (many chunks of unequal widths),
// with duplicated points (zero distances) and labels exactly eta apart:
// float64 values and gradients to 1e-10 relative. The scaled cases put
// distances up to 71 (x 10: unweighted, every summand is positive and the
// count is the product of the set sizes, the fused sum; with nu's small
// weights counted one by one) and above 100 (x 60), where float32 softplus
// underflows for some triplets and the positive summands must be counted one
// by one (float32, 1e-5).
func TestTripletLossesChunked(t *testing.T) {
	if err := torch.ManualSeed(7); err != nil {
		t.Fatal(err)
	}
	const b, eta = 200, 0.1
	sc := torch.NewScope()
	defer sc.Close()
	z := sc.Own(torch.Randn([]int64{b, 5}, torch.Float64, torch.CPU))
	y := sc.Own(torch.Rand([]int64{b}, torch.Float64, torch.CPU)).Square() // skewed labels
	zs, err := z.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	ys, err := y.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	copy(zs[5:10], zs[0:5]) // point 1 duplicates point 0
	ys[1], ys[2], ys[3] = ys[0], 0.25, 0.25+eta
	z, y = sc.Own(torch.FromFloat64(zs, b, 5)), sc.Own(torch.FromFloat64(ys, b))
	softplus := (*torch.Tensor).Softplus
	hinge := func(d *torch.Tensor) *torch.Tensor { return d.AddScalar(0.5).Relu() }
	cases := map[string][2]func(z, y *torch.Tensor) *torch.Tensor{
		"triplet": {Metric{Kind: MetricTriplet, Eta: eta}.Loss,
			func(z, y *torch.Tensor) *torch.Tensor { return gatherTripletLoss(z, y, eta, 0, softplus) }},
		"triplet_nu": {Metric{Kind: MetricTriplet, Eta: eta, Nu: 0.05}.Loss,
			func(z, y *torch.Tensor) *torch.Tensor { return gatherTripletLoss(z, y, eta, 0.05, softplus) }},
		"hard_triplet": {Metric{Kind: MetricHardTriplet, Eta: eta, Margin: 0.5}.Loss,
			func(z, y *torch.Tensor) *torch.Tensor { return gatherTripletLoss(z, y, eta, 0, hinge) }},
	}
	for name, c := range cases {
		got, gotGrad := lossAndGrad(t, c[0], z, y, torch.Float64)
		want, wantGrad := lossAndGrad(t, c[1], z, y, torch.Float64)
		if !closeTo(got, want, 1e-10) {
			t.Errorf("%s: %.12g, reference %.12g", name, got, want)
		}
		for i := range gotGrad {
			if !closeTo(gotGrad[i], wantGrad[i], 1e-10) {
				t.Errorf("%s: grad[%d] = %.12g, reference %.12g", name, i, gotGrad[i], wantGrad[i])
				break
			}
		}
		for _, scale := range []float64{10, 60} {
			far := z.MulScalar(scale)
			got, _ = lossAndGrad(t, c[0], far, y, torch.Float32)
			want, _ = lossAndGrad(t, c[1], far, y, torch.Float32)
			if !closeTo(got, want, 1e-5) {
				t.Errorf("%s, distances x %g (float32): %.8g, reference %.8g", name, scale, got, want)
			}
		}
	}
}

// BenchmarkMetricVsReference times forward and backward of the soft triplet
// and log-ratio losses and of their former implementations (the test
// references) side by side (batch 256, latent 25, uniform labels, eta 0.1),
// as wall and CPU time per call.
func BenchmarkMetricVsReference(b *testing.B) {
	if err := torch.ManualSeed(1); err != nil {
		b.Fatal(err)
	}
	z0 := torch.Randn([]int64{256, 25}, torch.Float32, torch.CPU)
	defer z0.Close()
	y0 := torch.Rand([]int64{256}, torch.Float32, torch.CPU)
	defer y0.Close()
	gather := func(z, y *torch.Tensor) *torch.Tensor {
		return gatherTripletLoss(z, y, 0.1, 0, (*torch.Tensor).Softplus)
	}
	for _, c := range []struct {
		name string
		f    func(z, y *torch.Tensor) *torch.Tensor
	}{
		{"triplet-chunked", Metric{Kind: MetricTriplet, Eta: 0.1}.Loss}, {"triplet-gather", gather},
		{"logratio-chunked", LogRatioLoss}, {"logratio-dense", denseLogRatioLoss},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuTime(b)
			for b.Loop() {
				sc := torch.NewScope()
				z := sc.Own(z0.Clone()).SetRequiresGrad(true)
				if err := c.f(z, sc.Own(y0.Clone())).Backward(); err != nil {
					b.Fatal(err)
				}
				sc.Close()
			}
			b.ReportMetric((cpuTime(b)-c0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime returns the process's user and system time, a measure less
// sensitive than wall time to other processes on a shared machine.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// denseLogRatioLoss is the former log-ratio implementation, kept as a
// reference: one (B, B, B) mask of the valid triplets and the expansion
// sum u_ai^2 (r_ai + c_ai) - 2 sum_a u_a M_a u_a.
func denseLogRatioLoss(z, y *torch.Tensor) *torch.Tensor {
	b := z.Shape()[0]
	dz := pairSquares(z).AddScalar(logRatioDistEps / float64(b)).Sqrt()
	dy := y.Unsqueeze(1).Sub(y.Unsqueeze(0)).Abs()
	u := dz.AddScalar(logRatioLogEps).Log().Sub(dy.AddScalar(logRatioLogEps).Log())
	off := offDiagonal(z, b)
	mask := dy.Unsqueeze(2).Lt(dy.Unsqueeze(1)).
		LogicalAnd(off.Unsqueeze(2)).LogicalAnd(off.Unsqueeze(1)).ToDType(u.DType())
	counts := mask.SumDims([]int64{2}, false).Add(mask.SumDims([]int64{1}, false))
	cross := u.Unsqueeze(1).Bmm(mask).Squeeze(1).Mul(u).Sum()
	return u.Square().Mul(counts).Sum().Sub(cross.MulScalar(2)).Div(mask.Sum().ClampMin(1))
}

// TestLogRatioChunked compares the chunked log-ratio loss with the dense
// reference on a batch of 200 (chunks of 6 anchors) with tied labels:
// float64 values and gradients to 1e-10 relative.
func TestLogRatioChunked(t *testing.T) {
	if err := torch.ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	sc := torch.NewScope()
	defer sc.Close()
	z := sc.Own(torch.Randn([]int64{200, 4}, torch.Float64, torch.CPU))
	y := sc.Own(torch.Rand([]int64{200}, torch.Float64, torch.CPU)).MulScalar(10).ClampMax(3).DivScalar(3) // ties at 1
	got, gotGrad := lossAndGrad(t, LogRatioLoss, z, y, torch.Float64)
	want, wantGrad := lossAndGrad(t, denseLogRatioLoss, z, y, torch.Float64)
	if !closeTo(got, want, 1e-10) {
		t.Errorf("log-ratio: %.12g, reference %.12g", got, want)
	}
	for i := range gotGrad {
		if !closeTo(gotGrad[i], wantGrad[i], 1e-10) {
			t.Errorf("log-ratio: grad[%d] = %.12g, reference %.12g", i, gotGrad[i], wantGrad[i])
			break
		}
	}
}
