package torch

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// pairSumWithGrad evaluates f(p, n) and returns its value and the gradients
// with respect to p and n.
func pairSumWithGrad(t *testing.T, f func(p, n *Tensor) *Tensor, p0, n0 []float64, b, j, k int64, dev Device) (float64, []float64, []float64) {
	t.Helper()
	sc := NewScope()
	defer sc.Close()
	p := sc.Own(sc.Own(FromFloat64(p0, b, j)).To(dev)).SetRequiresGrad(true)
	n := sc.Own(sc.Own(FromFloat64(n0, b, k)).To(dev)).SetRequiresGrad(true)
	y := sc.Own(f(p, n))
	v, err := y.Item()
	if err != nil {
		t.Fatal(err)
	}
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	var grads [2][]float64
	for i, x := range []*Tensor{p, n} {
		g, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads[i], err = sc.Own(g).Float64s()
		if err != nil {
			t.Fatal(err)
		}
	}
	return v, grads[0], grads[1]
}

// TestSoftplusPairSum compares tlbo::softplus_pair_sum with the same sum
// composed of ATen operators (softplus of the differences, the weights'
// outer products), value and gradients in float64, with padding entries (p =
// -1e30, n = +1e30) that must add nothing: to 1e-12 relative on distances
// from 0 to 15; to 1e-8 on distances to 30, where ATen's softplus takes x
// for log1p(exp(x)) above x = 20 (an error below exp(-20) = 2e-9 a summand,
// which the fused sum does not make); and to 1e-12 where every negative is
// 35 to 75 farther than every positive, so that every summand is below 1e-15
// (the range where log1p(e) is e, and where Sleef's log1p would pass through
// subnormals); to 1e-8 on distances to 200 and 800, where exp(p) overflows
// float32 (float64 for 800) and the sum forms exp(p - n) instead. Those with
// a summand above 2^-60 also in float32, to 1e-5.
func TestSoftplusPairSum(t *testing.T) { softplusPairSumRanges(t, CPU) }

// TestSoftplusPairSumCUDA is TestSoftplusPairSum on the GPU (the same
// tolerances); skipped without a CUDA device.
func TestSoftplusPairSumCUDA(t *testing.T) {
	if !CUDAAvailable() {
		t.Skip("no CUDA device seen")
	}
	softplusPairSumRanges(t, CUDA(0))
}

func softplusPairSumRanges(t *testing.T, dev Device) {
	for _, c := range []struct{ pLo, pHi, nLo, nHi, tol float64 }{
		{0, 15, 0, 15, 1e-12}, {0, 30, 0, 30, 1e-8}, {0, 5, 40, 75, 1e-12}, {0, 200, 0, 200, 1e-8}, {0, 800, 0, 800, 1e-8},
	} {
		checkSoftplusPairSum(t, c.pLo, c.pHi, c.nLo, c.nHi, c.tol, dev)
	}
}

func checkSoftplusPairSum(t *testing.T, pLo, pHi, nLo, nHi, tol float64, dev Device) {
	const b, j, k = 3, 4, 5
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(m int, lo, hi float64) []float64 {
		x := make([]float64, m)
		for i := range x {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		return x
	}
	p0, n0, wp0, wn0 := fill(b*j, pLo, pHi), fill(b*k, nLo, nHi), fill(b*j, 0, 1), fill(b*k, 0, 1)
	p0[j-1], n0[k-1], n0[2*k-1] = -1e30, 1e30, 1e30 // padding of anchors 0 and 1
	ws := NewScope()
	defer ws.Close()
	wp, wn := ws.Own(ws.Own(FromFloat64(wp0, b, j)).To(dev)), ws.Own(ws.Own(FromFloat64(wn0, b, k)).To(dev))
	fused := func(p, n *Tensor) *Tensor { return SoftplusPairSum(p, n, wp, wn) }
	composed := func(p, n *Tensor) *Tensor {
		terms := p.Unsqueeze(2).Sub(n.Unsqueeze(1)).Softplus()
		return terms.Mul(wp.Unsqueeze(2).Mul(wn.Unsqueeze(1))).Sum()
	}
	got, gp, gn := pairSumWithGrad(t, fused, p0, n0, b, j, k, dev)
	want, wp1, wn1 := pairSumWithGrad(t, composed, p0, n0, b, j, k, dev)
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) } // relative: the far sums are tiny
	if !near(got, want, tol) {
		t.Errorf("p in [%g, %g], n in [%g, %g]: value %.15g, composed %.15g", pLo, pHi, nLo, nHi, got, want)
	}
	for i := range gp {
		if !near(gp[i], wp1[i], tol) {
			t.Errorf("p in [%g, %g], n in [%g, %g]: d/dp[%d] = %.15g, composed %.15g", pLo, pHi, nLo, nHi, i, gp[i], wp1[i])
		}
	}
	for i := range gn {
		if !near(gn[i], wn1[i], tol) {
			t.Errorf("p in [%g, %g], n in [%g, %g]: d/dn[%d] = %.15g, composed %.15g", pLo, pHi, nLo, nHi, i, gn[i], wn1[i])
		}
	}
	if gp[j-1] != 0 || gn[k-1] != 0 {
		t.Errorf("padding entries have gradients %g and %g, want 0", gp[j-1], gn[k-1])
	}

	if nLo > pHi { // float32 leaves out summands below 2^-60
		return
	}
	sc := NewScope()
	defer sc.Close()
	p32 := sc.Own(sc.Own(FromFloat64(p0, b, j).ToDType(Float32)).To(dev))
	n32 := sc.Own(sc.Own(FromFloat64(n0, b, k).ToDType(Float32)).To(dev))
	v32, err := sc.Own(SoftplusPairSum(p32, n32, sc.Own(wp.ToDType(Float32)), sc.Own(wn.ToDType(Float32)))).Item()
	if err != nil {
		t.Fatal(err)
	}
	if !near(v32, want, 1e-5) {
		t.Errorf("float32 value %.8g, float64 %.8g", v32, want)
	}
}

// TestSoftplusPairSumEmpty: no anchors, positives or negatives sum to 0.
func TestSoftplusPairSumEmpty(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	for _, c := range [][3]int64{{0, 3, 4}, {2, 0, 4}, {2, 3, 0}} {
		p, n := sc.Own(Rand([]int64{c[0], c[1]}, Float32, CPU)), sc.Own(Rand([]int64{c[0], c[2]}, Float32, CPU))
		v, err := sc.Own(SoftplusPairSum(p, n, p, n)).Item()
		if err != nil || v != 0 {
			t.Errorf("shape %v: %v, %v; want 0", c, v, err)
		}
	}
}

// TestSoftplusPairSumRefusesBadInput: mismatched shapes and weights that
// require gradients are refused with the operator's name.
func TestSoftplusPairSumRefusesBadInput(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	p := sc.Own(Rand([]int64{2, 3}, Float64, CPU))
	n := sc.Own(Rand([]int64{2, 4}, Float64, CPU))
	for name, c := range map[string][4]*Tensor{
		"wp shape":    {p, n, n, n},
		"anchors":     {p, sc.Own(Rand([]int64{3, 4}, Float64, CPU)), p, sc.Own(Rand([]int64{3, 4}, Float64, CPU))},
		"1-d":         {sc.Own(Rand([]int64{3}, Float64, CPU)), n, sc.Own(Rand([]int64{3}, Float64, CPU)), n},
		"weight grad": {p, n, sc.Own(p.Clone()).SetRequiresGrad(true), n},
	} {
		err := sc.Own(SoftplusPairSum(c[0], c[1], c[2], c[3])).Err()
		if err == nil || !strings.Contains(err.Error(), "softplus_pair_sum") {
			t.Errorf("%s: error %v, want one naming softplus_pair_sum", name, err)
		}
	}
}
