package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gamma is Higham's γ_n = n u/(1 - n u): a dot product of n terms computed
// in any order is within γ_n Σ|terms| of the exact one.
func gamma(n int) float64 {
	const u = 0x1p-53
	return float64(n) * u / (1 - float64(n)*u)
}

// TestPredictGradBatch: each row of PredictGradBatch is PredictGrad at that
// row, up to the rounding of the dot products that the two compute in
// another order (x̂·ẑ_j, Ck and the gradients' Ẑᵀw: dgemm and dsymm against
// dgemv and dsymv). The test bounds the difference to first order, from
// each dot product's γ_n Σ|terms| for both orders and its propagation
// through the steps both share, doubled for the second-order terms; the
// sparse posteriors (RBF, warped or not) are evaluated at random points and
// at inducing points, where the variance is smallest. (The bounds are worst
// cases, some hundred times the differences seen; a relative error of 1e-10
// in a gradient term exceeds them.)
func TestPredictGradBatch(t *testing.T) {
	for _, c := range []struct {
		n, d, m int
		warp    bool
	}{{600, 25, 100, false}, {300, 8, 60, true}} {
		t.Run(fmt.Sprintf("d=%d warp=%v", c.d, c.warp), func(t *testing.T) {
			x, y := randomProblem(c.n, c.d, 3)
			model, err := New(x, y, Spec{Kernel: RBF, Warp: c.warp, Inducing: KMeans(x, c.m, 5, 1)}, testHyper(c.d, c.warp))
			if err != nil {
				t.Fatal(err)
			}
			const q = 40
			rng := rand.New(rand.NewPCG(5, 6))
			pts := mat.NewDense(q, c.d, nil)
			for i := 0; i < q; i++ {
				for k := 0; k < c.d; k++ {
					pts.Set(i, k, rng.Float64())
				}
			}
			for i := 0; i < 4; i++ {
				pts.SetRow(i, model.Inducing().RawRowView(i))
			}
			mean, variance := make([]float64, q), make([]float64, q)
			dmean, dvar := mat.NewDense(q, c.d, nil), mat.NewDense(q, c.d, nil)
			model.PredictGradBatch(pts, mean, variance, dmean, dvar)
			for i := 0; i < q; i++ {
				gm, gv := make([]float64, c.d), make([]float64, c.d)
				m1, v1 := model.PredictGrad(pts.RawRowView(i), gm, gv)
				b := batchBound(model, pts.RawRowView(i))
				if math.Abs(mean[i]-m1) > b.mean || math.Abs(variance[i]-v1) > b.variance {
					t.Errorf("row %d: mean %v, variance %v; PredictGrad %v, %v; bounds %g, %g",
						i, mean[i], variance[i], m1, v1, b.mean, b.variance)
				}
				for k := 0; k < c.d; k++ {
					if math.Abs(dmean.At(i, k)-gm[k]) > b.dmean[k] || math.Abs(dvar.At(i, k)-gv[k]) > b.dvar[k] {
						t.Errorf("row %d, dimension %d: gradients %v, %v; PredictGrad %v, %v; bounds %g, %g",
							i, k, dmean.At(i, k), dvar.At(i, k), gm[k], gv[k], b.dmean[k], b.dvar[k])
					}
				}
			}
		})
	}
}

// bounds are the first-order bounds of batchBound.
type bounds struct {
	mean, variance float64
	dmean, dvar    []float64
}

// batchBound bounds the difference between PredictGradBatch's and
// PredictGrad's values at x of an RBF model (whose derivative factor κ is
// the kernel value), to first order, doubled.
func batchBound(m *Model, x []float64) bounds {
	p, d := &m.post, m.Dim()
	mm := p.centres.Rows
	xh, jac := make([]float64, d), make([]float64, d)
	m.scale(x, xh, jac)
	xSq := 0.0
	for _, v := range xh {
		xSq += v * v
	}
	gd, gm := gamma(d), gamma(mm)
	k, dk := make([]float64, mm), make([]float64, mm)
	for j := 0; j < mm; j++ {
		z := p.centres.Data[j*p.centres.Stride : j*p.centres.Stride+d]
		dot, abs := 0.0, 0.0
		for i, v := range xh {
			dot += v * z[i]
			abs += math.Abs(v * z[i])
		}
		c, _ := m.kernel.corr(xSq + p.centresSq[j] - 2*dot)
		k[j] = p.s * c
		// r² = |x̂|² + |ẑ|² - 2 x̂·ẑ differs by 2·2γ_d Σ|x̂ᵢẑᵢ|, and ∂k/∂r² = -k/2.
		dk[j] = k[j] * 2 * gd * abs
	}
	ck, absCk, dck := make([]float64, mm), make([]float64, mm), make([]float64, mm)
	for j := 0; j < mm; j++ {
		for l := 0; l < mm; l++ {
			cjl := p.c.Data[min(j, l)*p.c.Stride+max(j, l)] // the upper triangle, as both read it
			ck[j] += cjl * k[l]
			absCk[j] += math.Abs(cjl * k[l])
			dck[j] += math.Abs(cjl) * dk[l]
		}
		dck[j] += 2 * gm * absCk[j]
	}
	var b bounds
	var sumA, sumB, dsv, dsc, absA, absB float64
	a, bw, da, db := make([]float64, mm), make([]float64, mm), make([]float64, mm), make([]float64, mm)
	for j := 0; j < mm; j++ {
		b.mean += math.Abs(p.v[j])*dk[j] + 2*gm*math.Abs(k[j]*p.v[j])
		b.variance += dk[j]*math.Abs(ck[j]) + math.Abs(k[j])*dck[j] + 2*gm*math.Abs(k[j]*ck[j])
		a[j], bw[j] = p.v[j]*k[j], ck[j]*k[j]
		da[j], db[j] = math.Abs(p.v[j])*dk[j], dck[j]*math.Abs(k[j])+math.Abs(ck[j])*dk[j]
		sumA, sumB = sumA+a[j], sumB+bw[j]
		absA, absB = absA+math.Abs(a[j]), absB+math.Abs(bw[j])
		dsv, dsc = dsv+da[j], dsc+db[j]
	}
	dsv += 2 * gm * absA
	dsc += 2 * gm * absB
	b.dmean, b.dvar = make([]float64, d), make([]float64, d)
	for i := 0; i < d; i++ {
		var za, zb, dza, dzb float64
		for j := 0; j < mm; j++ {
			z := p.centres.Data[j*p.centres.Stride+i]
			za += math.Abs(z * a[j])
			zb += math.Abs(z * bw[j])
			dza += math.Abs(z) * da[j]
			dzb += math.Abs(z) * db[j]
		}
		// Ẑᵀw in either order, w's own difference, the sum's term, and the
		// rounding of the final subtraction.
		u := 0x1p-53 * (za + math.Abs(sumA*xh[i]))
		b.dmean[i] = math.Abs(jac[i]) * (dza + 2*gm*za + math.Abs(xh[i])*dsv + 2*u)
		u = 0x1p-53 * 2 * (zb + math.Abs(sumB*xh[i]))
		b.dvar[i] = math.Abs(jac[i]) * (2*(dzb+2*gm*zb+math.Abs(xh[i])*dsc) + 2*u)
	}
	b.mean, b.variance = 2*b.mean, 2*b.variance
	for i := range b.dmean {
		b.dmean[i], b.dvar[i] = 2*b.dmean[i], 2*b.dvar[i]
	}
	return b
}
