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

// randomBatch seeds libtorch and returns b latent points of size 5 (standard
// normal) and b labels (uniform on [0, 1)), float64 on the CPU, owned by sc.
func randomBatch(t *testing.T, sc *torch.Scope, seed uint64, b int64) (z, y *torch.Tensor) {
	t.Helper()
	if err := torch.ManualSeed(seed); err != nil {
		t.Fatal(err)
	}
	return sc.Own(torch.Randn([]int64{b, 5}, torch.Float64, torch.CPU)), sc.Own(torch.Rand([]int64{b}, torch.Float64, torch.CPU))
}

// TestMetricLossesCUDA compares every metric loss and its gradient on the GPU
// with the same on the CPU, on a batch of 200 at latent scales 1, 10 and 60
// (the soft triplet loss's fused sum in and beyond its product range, and
// summands below float32's smallest number): float64 to 1e-10, float32 to
// 1e-5 (values) and 1e-4 (gradients), relative to max(1, |CPU value|).
// Skipped without a CUDA device.
func TestMetricLossesCUDA(t *testing.T) {
	if !torch.CUDAAvailable() {
		t.Skip("no CUDA device seen")
	}
	sc := torch.NewScope()
	defer sc.Close()
	z0, y := randomBatch(t, sc, 5, 200)
	for name, f := range metricFuncs(0.1, 0.05, 1) {
		for _, scale := range []float64{1, 10, 60} {
			z := sc.Own(z0.MulScalar(scale))
			for _, c := range []struct {
				dtype       torch.DType
				value, grad float64
			}{{torch.Float64, 1e-10, 1e-10}, {torch.Float32, 1e-5, 1e-4}} {
				want, wantGrad := lossAndGrad(t, f, z, y, c.dtype)
				got, gotGrad := lossAndGrad(t, f, sc.Own(z.To(torch.CUDA(0))), sc.Own(y.To(torch.CUDA(0))), c.dtype)
				if !closeTo(got, want, c.value) {
					t.Errorf("%s, scale %g, %v: CUDA %.10g, CPU %.10g", name, scale, c.dtype, got, want)
				}
				for i := range gotGrad {
					if !closeTo(gotGrad[i], wantGrad[i], c.grad) {
						t.Errorf("%s, scale %g, %v: CUDA grad[%d] %.10g, CPU %.10g", name, scale, c.dtype, i, gotGrad[i], wantGrad[i])
						break
					}
				}
			}
		}
	}
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
	// W-LBO's objective is LBO's: only the name differs (the warping is
	// the loop's, optimize --warp).
	w, _ := ParseELBO("w")
	lbo, _ := ParseELBO("lbo")
	renamed := w
	renamed.Name = "lbo"
	if w.Name != "w" || renamed != lbo {
		t.Errorf("w: %+v, want LBO's objective (%+v) named w", w, lbo)
	}
	if _, err := ParseELBO("vae"); err == nil {
		t.Error("unknown ELBO: no error")
	}
}

// gatherTripletLoss is the former implementation of the triplet losses, kept as
// an independent reference: it gathers every valid triplet through a
// (B, B, B) mask and sums term(dz_ij - dz_ik) w_p w_n over them. With round
// set, the summands are rounded to that dtype before they are counted and
// summed (see TestTripletLossesChunked).
func gatherTripletLoss(z, y *torch.Tensor, eta, nu float64, term func(*torch.Tensor) *torch.Tensor, round ...torch.DType) *torch.Tensor {
	return meanOverPositive(gatherTripletTerms(z, y, eta, nu, term, round...))
}

// gatherTripletTerms returns gatherTripletLoss's summands.
func gatherTripletTerms(z, y *torch.Tensor, eta, nu float64, term func(*torch.Tensor) *torch.Tensor, round ...torch.DType) *torch.Tensor {
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
	for _, dt := range round {
		terms = terms.ToDType(dt)
	}
	return terms
}

// keepingSubnormals runs fn with libtorch's IEEE subnormals, on the calling
// thread alone (libtorch's workers keep the mode they started in), as
// PyTorch runs by default and so the authors' code: the references below
// round float64 summands to float32, and a flushed rounding would drop the
// subnormal ones, which the loss counts whatever the mode.
func keepingSubnormals(t *testing.T, fn func()) {
	t.Helper()
	threads, flush := torch.NumThreads(), torch.FlushDenormal()
	if err := torch.SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	torch.SetFlushDenormal(false)
	defer func() {
		torch.SetFlushDenormal(flush)
		if err := torch.SetNumThreads(threads); err != nil {
			t.Error(err)
		}
	}()
	fn()
}

// TestPositiveSoftplusCount compares the soft triplet loss's count of
// positive summands with the float32 rounding of each summand computed in
// float64 (gatherTripletTerms), on float32 batches of 120 points scaled so
// that the smallest summand passes from above float32's smallest number
// (every triplet counts) to far below it, with and without nu's weights. The
// counts may differ only where a summand lies within float32's rounding of a
// distance of the bound: by at most 2 of the 254,432 triplets (they agree
// exactly on these batches).
func TestPositiveSoftplusCount(t *testing.T) {
	const b, eta = 120, 0.1
	// One libtorch thread, as the reference: the float32 distances come from
	// a matrix product whose cancellation (|a|^2 + |b|^2 - 2ab at these
	// scales) moves with the summation order, and on two threads 55 more
	// summands crossed the bound at scale 22 (issue 49). The count's
	// agreement is a property of one order; thread invariance is not its point.
	threads := torch.NumThreads()
	if err := torch.SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	defer torch.SetNumThreads(threads)
	sc := torch.NewScope()
	defer sc.Close()
	z0, y := randomBatch(t, sc, 3, b)
	for _, nu := range []float64{0, 0.05} {
		for _, scale := range []float64{10, 16, 20, 21, 22, 23, 24, 25, 40} {
			z := sc.Own(z0.MulScalar(scale).ToDType(torch.Float32))
			dz, dy := pairDistances(z, sc.Own(y.ToDType(torch.Float32)))
			got, err := softTripletSets(dz, dy, eta, nu).positiveSoftplusCount(underflowLog(torch.Float32)).Int64s()
			if err != nil {
				t.Fatal(err)
			}
			var terms *torch.Tensor
			var want []int64
			keepingSubnormals(t, func() {
				terms = gatherTripletTerms(z.ToDType(torch.Float64), y, eta, nu, (*torch.Tensor).Softplus, torch.Float32)
				want, err = terms.GtScalar(0).Sum().Int64s()
			})
			if err != nil {
				t.Fatal(err)
			}
			all := terms.Shape()[0]
			if d := got[0] - want[0]; d < -2 || d > 2 {
				t.Errorf("nu %g, scale %g: %d positive summands, reference %d (of %d)", nu, scale, got[0], want[0], all)
			}
			t.Logf("nu %g, scale %g: %d positive summands, reference %d (of %d)", nu, scale, got[0], want[0], all)
		}
	}
	// One triplet each side of the bound: exp(-103.9) is above half float32's
	// smallest number (2^-150 = exp(-103.97)), exp(-104.1) below; likewise
	// with a weight of 1e-6 (exp(-13.82)) on the positive.
	for _, c := range []struct {
		dn, wp float64
		want   int64
	}{{103.9, 1, 1}, {104.1, 1, 0}, {90.1, 1e-6, 1}, {90.3, 1e-6, 0}} {
		one := func(v float64) *torch.Tensor {
			return sc.Own(torch.FromFloat64([]float64{v}, 1, 1).ToDType(torch.Float32))
		}
		set := triplets{dp: one(0), dn: one(c.dn), wp: one(c.wp), wn: one(1), np: []int64{1}, nn: []int64{1}}
		got, err := set.positiveSoftplusCount(underflowLog(torch.Float32)).Int64s()
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != c.want {
			t.Errorf("softplus(-%g) x %g: counted %d, want %d", c.dn, c.wp, got[0], c.want)
		}
	}
}

// TestTripletLossesChunked compares the chunked triplet losses with the
// gather-based reference on batches of 200 (many chunks of unequal widths),
// with duplicated points (zero distances) and labels exactly eta apart:
// float64 values and gradients to 1e-10 relative. The scaled cases put
// distances up to 71 (x 10) and above 300 (x 60) in float32, where some
// summands are below float32's smallest number and must not be counted
// (1e-5). There the reference's summands are computed in float64 and
// rounded to float32 once: ATen's float32 softplus on CPU passes through
// Sleef's log1p, which returns 0 for some subnormal inputs (it counts about
// 0.2% fewer summands here), where the loss counts a summand whose value
// rounds to a positive float32, as a correctly rounded one would.
func TestTripletLossesChunked(t *testing.T) {
	const b, eta = 200, 0.1
	sc := torch.NewScope()
	defer sc.Close()
	z, y := randomBatch(t, sc, 7, b)
	y = sc.Own(y.Square()) // skewed labels
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
	reference := func(nu float64, term func(*torch.Tensor) *torch.Tensor) func(z, y *torch.Tensor) *torch.Tensor {
		return func(z, y *torch.Tensor) *torch.Tensor {
			if z.DType() == torch.Float64 {
				return gatherTripletLoss(z, y, eta, nu, term)
			}
			return gatherTripletLoss(z.ToDType(torch.Float64), y.ToDType(torch.Float64), eta, nu, term, z.DType())
		}
	}
	cases := map[string][2]func(z, y *torch.Tensor) *torch.Tensor{
		"triplet":      {Metric{Kind: MetricTriplet, Eta: eta}.Loss, reference(0, softplus)},
		"triplet_nu":   {Metric{Kind: MetricTriplet, Eta: eta, Nu: 0.05}.Loss, reference(0.05, softplus)},
		"hard_triplet": {Metric{Kind: MetricHardTriplet, Eta: eta, Margin: 0.5}.Loss, reference(0, hinge)},
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
			keepingSubnormals(t, func() { want, _ = lossAndGrad(t, c[1], far, y, torch.Float32) })
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
